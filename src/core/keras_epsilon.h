#pragma once
// Keras' backend.epsilon(): the fuzz factor Keras' losses clip probabilities with and
// Normalization's smallest standard deviation. A float32, as Keras' backends hold it.

namespace tenfold {

inline constexpr float keras_epsilon = 1e-7f;

}  // namespace tenfold
