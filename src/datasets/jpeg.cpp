#include "datasets/jpeg.h"

// jpeglib.h needs size_t and FILE declared before it.
#include <cstddef>
#include <cstdio>
#include <csetjmp>

#include <jpeglib.h>
#include <jerror.h>

#include "core/error.h"

namespace tenfold::datasets {

namespace {

// Larger than any image a training set holds; a header asking for more is not trusted.
constexpr uint64_t max_decoded_bytes = uint64_t(1) << 30;

/// libjpeg reports errors through error_exit, which must not return: it longjmps back to the
/// frame that called setjmp. The functions below that call setjmp hold no C++ objects with
/// destructors, so the jump skips nothing.
struct JpegDecoder {
  jpeg_decompress_struct info{};
  jpeg_error_mgr errors{};
  std::jmp_buf on_error;
  char message[JMSG_LENGTH_MAX] = {};
  bool truncated = false;

  JpegDecoder() { jpeg_create_decompress(&info); }
  ~JpegDecoder() { jpeg_destroy_decompress(&info); }
};

void exit_on_error(j_common_ptr info) {
  auto* decoder = reinterpret_cast<JpegDecoder*>(info->client_data);
  (*info->err->format_message)(info, decoder->message);
  std::longjmp(decoder->on_error, 1);
}

/// libjpeg decodes a truncated file to the end with gray filler and a warning; TensorFlow
/// refuses such a file, and so does Tenfold. Other warnings (extraneous bytes) pass.
void note_truncation(j_common_ptr info, int level) {
  if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) reinterpret_cast<JpegDecoder*>(info->client_data)->truncated = true;
}

/// Reads the header and sets the output colour space. False on a libjpeg error.
bool read_header(JpegDecoder& decoder, const std::vector<uint8_t>& bytes, int channels) {
  if (setjmp(decoder.on_error)) return false;
  jpeg_mem_src(&decoder.info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&decoder.info, TRUE);
  decoder.info.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  decoder.info.dct_method = JDCT_IFAST;
  decoder.info.do_fancy_upsampling = TRUE;
  return true;
}

bool read_rows(JpegDecoder& decoder, uint8_t* pixels, size_t row_bytes) {
  if (setjmp(decoder.on_error)) return false;
  jpeg_start_decompress(&decoder.info);
  while (decoder.info.output_scanline < decoder.info.output_height) {
    JSAMPROW row = pixels + size_t(decoder.info.output_scanline) * row_bytes;
    jpeg_read_scanlines(&decoder.info, &row, 1);
  }
  jpeg_finish_decompress(&decoder.info);
  return true;
}

}  // namespace

bool is_jpeg(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff;
}

Tensor decode_jpeg(const std::vector<uint8_t>& bytes, int channels, const std::string& name) {
  if (channels == 4) {
    throw Error(ErrorCode::invalid_argument,
                name + " is a JPEG image, which has no alpha channel: use color_mode 'rgb' or "
                       "'grayscale' for JPEG images (as TensorFlow, which refuses it too)");
  }
  check_argument(channels == 1 || channels == 3,
                 "JPEG channels must be 1 (grayscale) or 3 (rgb), got " + std::to_string(channels));
  if (!is_jpeg(bytes)) throw Error(ErrorCode::data_loss, name + " is not a JPEG file (no JPEG marker)");
  JpegDecoder decoder;
  decoder.info.err = jpeg_std_error(&decoder.errors);
  decoder.errors.error_exit = exit_on_error;
  decoder.errors.emit_message = note_truncation;
  decoder.info.client_data = &decoder;
  if (!read_header(decoder, bytes, channels)) {
    throw Error(ErrorCode::data_loss, name + " is a damaged JPEG file: " + decoder.message);
  }
  if (decoder.info.jpeg_color_space == JCS_CMYK || decoder.info.jpeg_color_space == JCS_YCCK) {
    throw Error(ErrorCode::invalid_argument,
                name + " is a CMYK JPEG image; Tenfold reads RGB and grayscale JPEGs: convert it "
                       "(e.g. `convert in.jpg -colorspace sRGB out.jpg`)");
  }
  const uint64_t width = decoder.info.image_width, height = decoder.info.image_height;
  const size_t row_bytes = size_t(width) * size_t(channels);
  if (width == 0 || height == 0 || height * row_bytes > max_decoded_bytes) {
    throw Error(ErrorCode::data_loss, name + ": a " + std::to_string(width) + "x" + std::to_string(height) +
                                          " JPEG image is empty or larger than Tenfold reads (1 GiB)");
  }
  Tensor image = Tensor::uninitialized(Shape({int64_t(height), int64_t(width), channels}), DType::uint8);
  if (!read_rows(decoder, image.data<uint8_t>(), row_bytes)) {
    throw Error(ErrorCode::data_loss, name + " is a damaged JPEG file: " + decoder.message);
  }
  if (decoder.truncated) throw Error(ErrorCode::data_loss, name + " is a truncated JPEG file: its data ends early");
  return image;
}

}  // namespace tenfold::datasets
