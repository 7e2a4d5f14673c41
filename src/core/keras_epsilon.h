#pragma once
// Keras' backend.epsilon(): the fuzz factor Keras' losses clip probabilities with and
// Normalization's smallest standard deviation. A float32, as Keras' backends hold it.

namespace tenfold {

inline constexpr float keras_epsilon = 1e-7f;
/// The same value widened, for losses computed in double.
inline constexpr double keras_epsilon_in_double = keras_epsilon;

}  // namespace tenfold
