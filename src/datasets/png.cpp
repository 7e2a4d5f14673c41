#include "datasets/png.h"

#include <png.h>

#include <csetjmp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace tenfold::datasets {

namespace {

// Larger than any image a training set holds; a header asking for more is not trusted.
constexpr uint64_t max_decoded_bytes = uint64_t(1) << 30;

/// libpng reports errors by longjmp to the frame that called setjmp. The functions below that
/// call setjmp hold no C++ objects with destructors, so the jump skips nothing.
struct PngDecoder {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t offset = 0;
  char message[256] = {};

  ~PngDecoder() { png_destroy_read_struct(&png, &info, nullptr); }
};

void on_error(png_structp png, png_const_charp message) {
  auto* decoder = static_cast<PngDecoder*>(png_get_error_ptr(png));
  std::snprintf(decoder->message, sizeof decoder->message, "%s", message);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void read_from_memory(png_structp png, png_bytep out, png_size_t bytes) {
  auto* decoder = static_cast<PngDecoder*>(png_get_io_ptr(png));
  if (bytes > decoder->size - decoder->offset) png_error(png, "file ends inside the image data");
  std::memcpy(out, decoder->data + decoder->offset, bytes);
  decoder->offset += bytes;
}

/// Reads the header and sets up the conversions to 8-bit `channels`. False on a libpng error.
bool read_header(PngDecoder& decoder, int channels, png_uint_32& width, png_uint_32& height) {
  if (setjmp(png_jmpbuf(decoder.png))) return false;
  png_set_read_fn(decoder.png, &decoder, read_from_memory);
  png_read_info(decoder.png, decoder.info);
  int color_type = png_get_color_type(decoder.png, decoder.info);
  int bit_depth = png_get_bit_depth(decoder.png, decoder.info);
  bool wants_alpha = channels == 4;
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(decoder.png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(decoder.png);
  if (png_get_valid(decoder.png, decoder.info, PNG_INFO_tRNS)) {
    if (wants_alpha) {
      png_set_tRNS_to_alpha(decoder.png);
    } else {
      png_set_strip_alpha(decoder.png);
    }
  }
  if (bit_depth == 16) png_set_strip_16(decoder.png);  // the high byte, as TensorFlow
  bool has_color = (color_type & PNG_COLOR_MASK_COLOR) != 0;
  bool has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if (channels == 1 && has_color) png_set_rgb_to_gray(decoder.png, 1, 0.299, 0.587);
  if (channels >= 3 && !has_color) png_set_gray_to_rgb(decoder.png);
  if (wants_alpha && !has_alpha) png_set_add_alpha(decoder.png, 0xff, PNG_FILLER_AFTER);
  if (!wants_alpha && has_alpha) png_set_strip_alpha(decoder.png);
  png_set_interlace_handling(decoder.png);
  png_read_update_info(decoder.png, decoder.info);
  width = png_get_image_width(decoder.png, decoder.info);
  height = png_get_image_height(decoder.png, decoder.info);
  return true;
}

bool read_rows(PngDecoder& decoder, png_bytepp rows) {
  if (setjmp(png_jmpbuf(decoder.png))) return false;
  png_read_image(decoder.png, rows);
  return true;
}

}  // namespace

Tensor decode_png(const std::vector<uint8_t>& bytes, int channels, const std::string& name) {
  check_argument(channels == 1 || channels == 3 || channels == 4,
                 "PNG channels must be 1 (grayscale), 3 (rgb) or 4 (rgba), got " +
                     std::to_string(channels));
  if (bytes.size() < 8 || png_sig_cmp(bytes.data(), 0, 8) != 0) {
    throw Error(ErrorCode::data_loss, name + " is not a PNG file (no PNG signature)");
  }
  PngDecoder decoder;
  decoder.data = bytes.data();
  decoder.size = bytes.size();
  decoder.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &decoder, on_error, on_warning);
  if (decoder.png != nullptr) decoder.info = png_create_info_struct(decoder.png);
  if (decoder.info == nullptr) throw Error(ErrorCode::resource_exhausted, "libpng could not start");

  png_uint_32 width = 0, height = 0;
  if (!read_header(decoder, channels, width, height)) {
    throw Error(ErrorCode::data_loss, name + " is a damaged PNG file: " + decoder.message);
  }
  size_t row_bytes = png_get_rowbytes(decoder.png, decoder.info);
  if (row_bytes != size_t(width) * size_t(channels) ||
      uint64_t(height) * row_bytes > max_decoded_bytes) {
    throw Error(ErrorCode::data_loss, name + ": a " + std::to_string(width) + "x" +
                                          std::to_string(height) +
                                          " PNG image is larger than Tenfold reads (1 GiB)");
  }
  Tensor image = Tensor::uninitialized(Shape({int64_t(height), int64_t(width), channels}),
                                       DType::uint8);
  std::vector<png_bytep> rows(height);
  for (png_uint_32 y = 0; y < height; ++y) rows[y] = image.data<uint8_t>() + y * row_bytes;
  if (!read_rows(decoder, rows.data())) {
    throw Error(ErrorCode::data_loss, name + " is a damaged PNG file: " + decoder.message);
  }
  return image;
}

Tensor read_png(const std::string& path, int channels) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ErrorCode::not_found, "cannot open image " + path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return decode_png(bytes, channels, path);
}

}  // namespace tenfold::datasets
