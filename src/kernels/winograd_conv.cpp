#include "kernels/winograd_conv.h"

#include <algorithm>

#include "core/error.h"
#include "kernels/threads.h"
#include "kernels/vectors.h"

namespace tenfold::kernels {

namespace {

using vectors::Floats;
using vectors::lanes;
using vectors::load;
using vectors::store;

constexpr int64_t winograd_positions = 16;  // values of a transformed 4x4 tile
// A chunk's transformed inputs and products together: within L2 (512 KiB per core on the AVX2
// EPYC, 1-2 MiB on the Xeons).
constexpr int64_t winograd_chunk_bytes = 256 * 1024;
// But no fewer tiles than this: the 16 transformed kernels (1 MiB for 128 -> 128) are read again
// for each chunk, and 128 -> 128 ran 15-20% slower in chunks of 16 tiles than of 32 to 128.
constexpr int64_t winograd_min_chunk_tiles = 32;

/// Where a position's values start in a chunk of `count` tiles' transformed values, rows of
/// `channels`: positions `count` x `channels` floats and a cache line apart. (Without the line,
/// 2^k bytes apart, the 16 values of a tile went to one L1 set, whose 8 ways thrashed: the
/// transforms ran 4x slower.)
int64_t position_start(int64_t position, int64_t count, int64_t channels) {
  return position * (count * channels + 16);
}

/// One matrix product c [rows x columns] = a [rows x depth] b [depth x columns], or c += it:
/// a's element (r, k) at a[r * a_row + k * a_step] (a row-major or transposed), b and c
/// row-major with rows b_row and c_row floats apart; columns whole vectors.
struct Product {
  const float* a;
  int64_t a_row, a_step;
  const float* b;
  int64_t b_row;
  float* c;
  int64_t c_row;
  int64_t rows, depth, columns;
  bool accumulate;
};

/// Rows x Vectors of c from row `row` and vector column `column`, the sums in registers
/// (6 x 2 on AVX2 is 12 of its 16 registers, the rest holding b's row and a's value).
template <int Rows, int Vectors>
void multiply_block(const Product& p, int64_t row, int64_t column) {
  const float* a = p.a + row * p.a_row;
  const float* b = p.b + column;
  float* c = p.c + row * p.c_row + column;
  Floats sums[Rows][Vectors];
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v)
      sums[r][v] = p.accumulate ? load(c + r * p.c_row + v * lanes) : Floats{};
  }
  for (int64_t k = 0; k < p.depth; ++k) {
    Floats b_row[Vectors];
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v) b_row[v] = load(b + k * p.b_row + v * lanes);
    const float* a_column = a + k * p.a_step;
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
      const float value = a_column[r * p.a_row];  // broadcast by the product
#pragma GCC unroll 2
      for (int v = 0; v < Vectors; ++v) sums[r][v] += value * b_row[v];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v) store(c + r * p.c_row + v * lanes, sums[r][v]);
  }
}

/// The last rows from `row` (fewer than a block's), in one block of their number.
template <int Vectors, int Rows>
void multiply_last_rows(const Product& p, int64_t row, int64_t column) {
  if constexpr (Rows > 0) {
    if (p.rows - row == Rows) return multiply_block<Rows, Vectors>(p, row, column);
    multiply_last_rows<Vectors, Rows - 1>(p, row, column);
  }
}

template <int Vectors>
void multiply_columns(const Product& p, int64_t column) {
  constexpr int rows = Vectors == 2 ? 6 : 8;
  int64_t row = 0;
  for (; row + rows <= p.rows; row += rows) multiply_block<rows, Vectors>(p, row, column);
  multiply_last_rows<Vectors, rows - 1>(p, row, column);
}

void multiply(const Product& p) {
  int64_t column = 0;
  for (; column + 2 * lanes <= p.columns; column += 2 * lanes) multiply_columns<2>(p, column);
  if (column < p.columns) multiply_columns<1>(p, column);
}

/// A tile's 2x2 outputs from its 16 transformed values m (row by row, `stride` floats apart
/// from `m`): A^T m A.
void untransform(const float* m, int64_t stride, Floats (&y)[2][2]) {
  Floats s[2][4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const Floats m0 = load(m + j * stride), m1 = load(m + (4 + j) * stride),
                 m2 = load(m + (8 + j) * stride), m3 = load(m + (12 + j) * stride);
    s[0][j] = m0 + m1 + m2;
    s[1][j] = m1 - m2 - m3;
  }
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    y[i][0] = s[i][0] + s[i][1] + s[i][2];
    y[i][1] = s[i][1] - s[i][2] - s[i][3];
  }
}

/// G x (x: 3 rows) as 4 rows: rows 0, (0 + 1 + 2) / 2, (0 - 1 + 2) / 2, 2.
void kernel_rows(const Floats (&x)[3], Floats (&gx)[4]) {
  gx[0] = x[0];
  gx[1] = 0.5f * (x[0] + x[1] + x[2]);
  gx[2] = 0.5f * (x[0] - x[1] + x[2]);
  gx[3] = x[2];
}

/// G^T x (x: 4 rows) as 3 rows.
void kernel_rows_back(const Floats (&x)[4], Floats (&gx)[3]) {
  gx[0] = x[0] + 0.5f * (x[1] + x[2]);
  gx[1] = 0.5f * (x[1] - x[2]);
  gx[2] = 0.5f * (x[1] + x[2]) + x[3];
}

/// Tiles in order from tile `first` of a batch: image, tile row, tile column.
struct TileCursor {
  int64_t image, row, column;
  int64_t rows, columns;  // tiles per image
  TileCursor(int64_t first, int64_t tiles_high, int64_t tiles_wide)
      : image(first / (tiles_high * tiles_wide)),
        row(first % (tiles_high * tiles_wide) / tiles_wide),
        column(first % tiles_wide),
        rows(tiles_high),
        columns(tiles_wide) {}
  void next() {
    if (++column < columns) return;
    column = 0;
    if (++row < rows) return;
    row = 0;
    ++image;
  }
};

/// A tile's 16 transformed inputs B^T d B, `stride` floats apart from `out`: `pixel(i, j)` is
/// its input pixel at row i and column j (a zero one outside the image).
template <typename Pixel>
void transform_input_tile(const Pixel& pixel, int64_t channels, int64_t stride, float* out) {
  for (int64_t channel = 0; channel < channels; channel += lanes) {
    Floats u[4][4];  // B^T d
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const Floats d0 = load(pixel(0, j) + channel), d1 = load(pixel(1, j) + channel),
                   d2 = load(pixel(2, j) + channel), d3 = load(pixel(3, j) + channel);
      u[0][j] = d0 - d2;
      u[1][j] = d1 + d2;
      u[2][j] = d2 - d1;
      u[3][j] = d1 - d3;
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {  // (B^T d) B
      float* row = out + 4 * i * stride + channel;
      store(row, u[i][0] - u[i][2]);
      store(row + stride, u[i][1] + u[i][2]);
      store(row + 2 * stride, u[i][2] - u[i][1]);
      store(row + 3 * stride, u[i][1] - u[i][3]);
    }
  }
}

/// A tile's 16 transformed output gradients A dy A^T, as transform_input_tile: `pixel(a, b)` its
/// output gradient at row a and column b.
template <typename Pixel>
void transform_gradient_tile(const Pixel& pixel, int64_t channels, int64_t stride, float* out) {
  for (int64_t f = 0; f < channels; f += lanes) {
    Floats z[4][2];  // A dy, A = [[1, 0], [1, 1], [1, -1], [0, -1]]
#pragma GCC unroll 2
    for (int b = 0; b < 2; ++b) {
      const Floats dy0 = load(pixel(0, b) + f), dy1 = load(pixel(1, b) + f);
      z[0][b] = dy0;
      z[1][b] = dy0 + dy1;
      z[2][b] = dy0 - dy1;
      z[3][b] = -dy1;
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {  // (A dy) A^T
      float* row = out + 4 * i * stride + f;
      store(row, z[i][0]);
      store(row + stride, z[i][0] + z[i][1]);
      store(row + 2 * stride, z[i][0] - z[i][1]);
      store(row + 3 * stride, -z[i][1]);
    }
  }
}

}  // namespace

bool WinogradConv2DKernel::handles(const WindowGeometry& g) {
  return g.window_height == 3 && g.window_width == 3 && g.stride_height == 1 &&
         g.stride_width == 1 && g.dilation_height == 1 && g.dilation_width == 1 && g.groups == 1 &&
         g.in_channels % lanes == 0 && g.out_channels % lanes == 0;
}

WinogradConv2DKernel::WinogradConv2DKernel(const WindowGeometry& g, int64_t chunk_tiles) : g_(g) {
  check_argument(handles(g),
                 "WinogradConv2DKernel computes 3x3 convolutions at stride 1 over whole vectors of "
                 "channels only");
  auto pass = [](int64_t in_height, int64_t in_width, int64_t in_channels, int64_t out_height,
                 int64_t out_width, int64_t out_channels, int64_t pad_top, int64_t pad_left) {
    return Pass{in_height,    in_width, in_channels, out_height,           out_width,
                out_channels, pad_top,  pad_left,    (out_height + 1) / 2, (out_width + 1) / 2};
  };
  forward_ = pass(g.in_height, g.in_width, g.in_channels, g.out_height, g.out_width, g.out_channels,
                  g.pad_top, g.pad_left);
  // dx[i] = sum_k dy[i - k + pad] w[k] = sum_k' dy[i + k' - (2 - pad)] w[2 - k']: a convolution
  // of dy with the flipped kernel, padded by 2 - pad.
  backward_ = pass(g.out_height, g.out_width, g.out_channels, g.in_height, g.in_width,
                   g.in_channels, 2 - g.pad_top, 2 - g.pad_left);
  const int64_t channels = g.in_channels + g.out_channels;
  chunk_tiles_ = chunk_tiles > 0
                     ? chunk_tiles
                     : std::max<int64_t>(winograd_min_chunk_tiles,
                                         winograd_chunk_bytes / (winograd_positions * channels *
                                                                 int64_t(sizeof(float))));
  const int64_t wider = std::max(g.in_channels, g.out_channels);
  const size_t chunk_values = size_t(position_start(winograd_positions, chunk_tiles_, wider));
  transformed_.assign(size_t(max_threads()), std::vector<float>(chunk_values));
  products_.assign(size_t(max_threads()), std::vector<float>(chunk_values));
  zeros_.assign(size_t(wider), 0.0f);
  forward_weights_.resize(size_t(winograd_positions * g.in_channels * g.out_channels));
  backward_weights_.resize(forward_weights_.size());
}

int64_t WinogradConv2DKernel::tiles(const Pass& pass) const {
  return g_.batch * pass.tiles_high * pass.tiles_wide;
}

int WinogradConv2DKernel::threads() const {
  return std::min(max_threads(), int(transformed_.size()));
}

void WinogradConv2DKernel::set_weights(const float* kernel) {
  const int64_t C = g_.in_channels, F = g_.out_channels;
  // Backward-data's kernel flipped: G's rows reversed are rows 3, 1, 2, 0, so its transform at
  // position (i, j) is the forward's at (flip[i], flip[j]), channels swapped.
  constexpr int flip[4] = {3, 1, 2, 0};
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t f = 0; f < F; f += lanes) {
      Floats rows[3][4];  // G g: [kh][i] after the kw transform, per kh
      for (int kh = 0; kh < 3; ++kh) {
        Floats taps[3];
        for (int kw = 0; kw < 3; ++kw) taps[kw] = load(kernel + ((kh * 3 + kw) * C + c) * F + f);
        kernel_rows(taps, rows[kh]);
      }
      for (int j = 0; j < 4; ++j) {
        const Floats column[3] = {rows[0][j], rows[1][j], rows[2][j]};
        Floats transformed[4];
        kernel_rows(column, transformed);
        for (int i = 0; i < 4; ++i) {
          store(forward_weights_.data() + ((i * 4 + j) * C + c) * F + f, transformed[i]);
          float* flipped = backward_weights_.data() + (flip[i] * 4 + flip[j]) * F * C;
          for (int64_t lane = 0; lane < lanes; ++lane)
            flipped[(f + lane) * C + c] = transformed[i][lane];
        }
      }
    }
  }
}

void WinogradConv2DKernel::transform_input(const Pass& pass, const float* src, int64_t first,
                                           int64_t count, float* transformed) const {
  const int64_t C = pass.in_channels, row_floats = pass.in_width * C;
  const int64_t stride = position_start(1, count, C);
  TileCursor tile(first, pass.tiles_high, pass.tiles_wide);
  for (int64_t t = 0; t < count; ++t, tile.next()) {
    const int64_t top = 2 * tile.row - pass.pad_top, left = 2 * tile.column - pass.pad_left;
    const float* image = src + tile.image * pass.in_height * row_floats;
    float* out = transformed + t * C;
    if (top >= 0 && top + 4 <= pass.in_height && left >= 0 && left + 4 <= pass.in_width) {
      // Inside the image (most tiles): addresses from the corner, no padding to check.
      const float* corner = image + top * row_floats + left * C;
      transform_input_tile([&](int i, int j) { return corner + i * row_floats + j * C; }, C, stride,
                           out);
      continue;
    }
    const float* pixels[4][4];  // zeros_ outside the image: zero padding
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t y = top + i, x = left + j;
        const bool inside = y >= 0 && y < pass.in_height && x >= 0 && x < pass.in_width;
        pixels[i][j] = inside ? image + y * row_floats + x * C : zeros_.data();
      }
    }
    transform_input_tile([&](int i, int j) { return pixels[i][j]; }, C, stride, out);
  }
}

void WinogradConv2DKernel::transform_gradient(const float* diff_dst, int64_t first, int64_t count,
                                              float* transformed) const {
  const Pass& pass = forward_;
  const int64_t F = pass.out_channels, row_floats = pass.out_width * F;
  const int64_t stride = position_start(1, count, F);
  TileCursor tile(first, pass.tiles_high, pass.tiles_wide);
  for (int64_t t = 0; t < count; ++t, tile.next()) {
    const int64_t top = 2 * tile.row, left = 2 * tile.column;
    const float* corner = diff_dst + (tile.image * pass.out_height + top) * row_floats + left * F;
    float* out = transformed + t * F;
    if (top + 2 <= pass.out_height && left + 2 <= pass.out_width) {
      transform_gradient_tile([&](int a, int b) { return corner + a * row_floats + b * F; }, F,
                              stride, out);
      continue;
    }
    const float* pixels[2][2];  // zeros_ past the output's edge (an odd size's last tile)
    for (int64_t a = 0; a < 2; ++a) {
      for (int64_t b = 0; b < 2; ++b) {
        const bool inside = top + a < pass.out_height && left + b < pass.out_width;
        pixels[a][b] = inside ? corner + a * row_floats + b * F : zeros_.data();
      }
    }
    transform_gradient_tile([&](int a, int b) { return pixels[a][b]; }, F, stride, out);
  }
}

void WinogradConv2DKernel::run(const Pass& pass, const float* src, const float* weights,
                               const float* bias, bool relu, float* dst) {
  const int64_t C = pass.in_channels, F = pass.out_channels, total = tiles(pass);
  const int64_t chunks = (total + chunk_tiles_ - 1) / chunk_tiles_;
#pragma omp parallel for schedule(static) num_threads(threads())
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    float* transformed = transformed_[size_t(thread_number())].data();
    float* products = products_[size_t(thread_number())].data();
    const int64_t first = chunk * chunk_tiles_, count = std::min(chunk_tiles_, total - first);
    transform_input(pass, src, first, count, transformed);
    for (int64_t position = 0; position < winograd_positions; ++position) {
      multiply({transformed + position_start(position, count, C), C, 1, weights + position * C * F,
                F, products + position_start(position, count, F), F, count, C, F, false});
    }
    TileCursor tile(first, pass.tiles_high, pass.tiles_wide);
    for (int64_t t = 0; t < count; ++t, tile.next()) {
      const int64_t rows = std::min<int64_t>(2, pass.out_height - 2 * tile.row),
                    columns = std::min<int64_t>(2, pass.out_width - 2 * tile.column);
      float* out =
          dst +
          ((tile.image * pass.out_height + 2 * tile.row) * pass.out_width + 2 * tile.column) * F;
      const float* tile_products = products + t * F;
      for (int64_t f = 0; f < F; f += lanes) {
        Floats y[2][2];
        untransform(tile_products + f, position_start(1, count, F), y);
        const Floats shift = bias ? load(bias + f) : Floats{};
        for (int64_t a = 0; a < rows; ++a) {
          for (int64_t b = 0; b < columns; ++b) {
            Floats value = y[a][b] + shift;
            if (relu) value = value > 0 ? value : Floats{};
            store(out + (a * pass.out_width + b) * F + f, value);
          }
        }
      }
    }
  }
}

void WinogradConv2DKernel::forward(const float* src, const float* bias, bool relu, float* dst) {
  run(forward_, src, forward_weights_.data(), bias, relu, dst);
}

void WinogradConv2DKernel::backward_data(const float* diff_dst, float* diff_src) {
  run(backward_, diff_dst, backward_weights_.data(), nullptr, false, diff_src);
}

void WinogradConv2DKernel::backward_weights(const float* src, const float* diff_dst,
                                            float* diff_kernel) {
  const int64_t C = g_.in_channels, F = g_.out_channels, total = tiles(forward_);
  const int64_t chunks = (total + chunk_tiles_ - 1) / chunk_tiles_;
  const int team = threads();
  if (sums_.empty())
    sums_.assign(transformed_.size(), std::vector<float>(size_t(winograd_positions * C * F)));
#pragma omp parallel num_threads(team)
  {
    float* transformed = transformed_[size_t(thread_number())].data();
    float* gradients = products_[size_t(thread_number())].data();
    std::vector<float>& sums = sums_[size_t(thread_number())];
    std::fill(sums.begin(), sums.end(), 0.0f);
#pragma omp for schedule(static)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      const int64_t first = chunk * chunk_tiles_, count = std::min(chunk_tiles_, total - first);
      transform_input(forward_, src, first, count, transformed);
      transform_gradient(diff_dst, first, count, gradients);
      // sums[position] [C x F] += transformed[position]^T [C x tiles] gradients[position] [tiles x
      // F]
      for (int64_t position = 0; position < winograd_positions; ++position) {
        multiply({transformed + position_start(position, count, C), 1, C,
                  gradients + position_start(position, count, F), F, sums.data() + position * C * F,
                  F, C, count, F, true});
      }
    }
  }
  // The threads' sums added in thread order (a run's result does not depend on timing).
  std::vector<float>& total_sums = sums_[0];
  for (int thread = 1; thread < team; ++thread) {
    const std::vector<float>& sums = sums_[size_t(thread)];
    for (size_t k = 0; k < total_sums.size(); ++k) total_sums[k] += sums[k];
  }
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t f = 0; f < F; f += lanes) {
      Floats rows[4][3];  // G^T s over j, per i
      for (int i = 0; i < 4; ++i) {
        Floats s[4];
        for (int j = 0; j < 4; ++j) s[j] = load(total_sums.data() + ((i * 4 + j) * C + c) * F + f);
        kernel_rows_back(s, rows[i]);
      }
      for (int kw = 0; kw < 3; ++kw) {
        const Floats column[4] = {rows[0][kw], rows[1][kw], rows[2][kw], rows[3][kw]};
        Floats taps[3];
        kernel_rows_back(column, taps);
        for (int kh = 0; kh < 3; ++kh)
          store(diff_kernel + ((kh * 3 + kw) * C + c) * F + f, taps[kh]);
      }
    }
  }
}

}  // namespace tenfold::kernels
