#include "kernels/onednn/matmul_weight_gradients.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace tenfold::kernels::onednn {

namespace {

/// A chunk's copied windows stay within this many bytes (half this CPU's 2 MiB L2), at least
/// one pixel's.
constexpr size_t kChunkBytes = size_t(1) << 20;

bool pointwise(const WindowGeometry& g) {
  return g.window_height == 1 && g.window_width == 1 && g.stride_height == 1 && g.stride_width == 1 &&
         g.pad_top == 0 && g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0;
}

}  // namespace

MatmulWeightGradients::MatmulWeightGradients(const WindowGeometry& g, memory::data_type type)
    : g_(g),
      type_(type),
      element_bytes_(memory::data_type_size(type)),
      reduction_(g.window_height * g.window_width * g.in_channels),
      copies_(!pointwise(g)) {
  check_argument(g.groups == 1, "a grouped convolution's weight gradient is not a single matmul");
  pixels_ = g.batch * g.out_height * g.out_width;
  const size_t row_bytes = size_t(reduction_) * element_bytes_;
  chunk_pixels_ = copies_ ? std::clamp<int64_t>(int64_t(kChunkBytes / row_bytes), 1, pixels_) : pixels_;
  chunk_ = make_matmul(chunk_pixels_);
  if (pixels_ % chunk_pixels_ != 0) last_chunk_ = make_matmul(pixels_ % chunk_pixels_);
  if (copies_) rows_ = allocate_aligned(size_t(chunk_pixels_) * row_bytes);
  scratchpad_ = allocate_aligned(std::max(chunk_.scratchpad_bytes(), last_chunk_.scratchpad_bytes()));
}

BoundPrimitive MatmulWeightGradients::make_matmul(int64_t rows) const {
  // The rows read transposed: [reduction, rows] over row-major [rows, reduction].
  const memory::desc windows({reduction_, rows}, type_, memory::dims{1, reduction_});
  const memory::desc diff_dst({rows, g_.out_channels}, type_, memory::format_tag::ab);
  const memory::desc sums({reduction_, g_.out_channels}, memory::data_type::f32, memory::format_tag::ab);
  dnnl::primitive_attr attr = user_scratchpad_attr();
  dnnl::post_ops add;
  add.append_sum(1.0f);  // each chunk adds into the sums
  attr.set_post_ops(add);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(windows, diff_dst, sums), attr, engine());
  return BoundPrimitive(dnnl::matmul(pd), pd,
                        {{DNNL_ARG_SRC, windows}, {DNNL_ARG_WEIGHTS, diff_dst}, {DNNL_ARG_DST, sums}});
}

void MatmulWeightGradients::copy_windows(const std::byte* src, int64_t first, int64_t count) {
  const WindowGeometry& g = g_;
  const size_t pixel_bytes = size_t(g.in_channels) * element_bytes_;
  const int64_t image_pixels = g.out_height * g.out_width;
  std::byte* rows = rows_.get();
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < count; ++k) {
    const int64_t pixel = first + k, n = pixel / image_pixels;
    const int64_t oy = pixel % image_pixels / g.out_width, ox = pixel % g.out_width;
    std::byte* row = rows + size_t(k) * size_t(reduction_) * element_bytes_;
    for (int64_t ky = 0; ky < g.window_height; ++ky) {
      const int64_t iy = oy * g.stride_height - g.pad_top + ky * g.dilation_height;
      for (int64_t kx = 0; kx < g.window_width; ++kx) {
        const int64_t ix = ox * g.stride_width - g.pad_left + kx * g.dilation_width;
        std::byte* to = row + size_t(ky * g.window_width + kx) * pixel_bytes;
        if (iy < 0 || iy >= g.in_height || ix < 0 || ix >= g.in_width) {
          std::memset(to, 0, pixel_bytes);  // padding
        } else {
          std::memcpy(to, src + size_t((n * g.in_height + iy) * g.in_width + ix) * pixel_bytes, pixel_bytes);
        }
      }
    }
  }
}

void MatmulWeightGradients::execute(const void* src, const void* diff_dst, float* diff_weights) {
  std::fill(diff_weights, diff_weights + reduction_ * g_.out_channels, 0.0f);
  const auto* input = static_cast<const std::byte*>(src);
  const auto* gradient = static_cast<const std::byte*>(diff_dst);
  const size_t in_pixel = size_t(g_.in_channels) * element_bytes_;
  const size_t out_pixel = size_t(g_.out_channels) * element_bytes_;
  for (int64_t first = 0; first < pixels_; first += chunk_pixels_) {
    const int64_t count = std::min(chunk_pixels_, pixels_ - first);
    const void* windows = input + size_t(first) * in_pixel;  // a pointwise convolution's own rows
    if (copies_) {
      copy_windows(input, first, count);
      windows = rows_.get();
    }
    (count == chunk_pixels_ ? chunk_ : last_chunk_)
        .execute({windows, gradient + size_t(first) * out_pixel, diff_weights}, scratchpad_.get());
  }
}

memory::desc MatmulWeightGradients::diff_weights_desc() const {
  return memory::desc({g_.out_channels, g_.in_channels, g_.window_height, g_.window_width}, memory::data_type::f32,
                      memory::format_tag::hwio);
}

std::string MatmulWeightGradients::implementation() const {
  return "matmul " + chunk_.implementation() + (copies_ ? " after im2col" : "");
}

}  // namespace tenfold::kernels::onednn
