#pragma once
// Keras model files. `.h5` is Keras' HDF5 layout (what model.save('m.h5') writes and
// keras.models.load_model reads):
//   /@keras_version, @backend, @model_config (the model's JSON), @training_config (loss,
//   metrics, optimizer config)
//   /model_weights/@layer_names; /model_weights/<layer>/@weight_names, and each weight at
//     /model_weights/<layer>/<model>/<layer>/<weight> in Keras' shapes (Conv2D kernel
//     (kh, kw, in, out), Dense kernel (in, out))
//   /optimizer_weights/@weight_names; <optimizer>/iteration, learning_rate, and per weight
//     <model>_<layer>_<weight>_<slot> (Adam: momentum, velocity)
// Saving is crash-safe (io/atomic_file.h). Loading treats the file as untrusted: unknown layer
// classes (Lambda included) are refused, links and external storage are refused, and every
// shape is checked against the config before anything is read.
#include <memory>
#include <string>

#include "models/model.h"

namespace tenfold::io {

/// Writes the model, its compile configuration and optimizer state. The format follows the
/// extension: `.keras` (Keras 3: a zip of metadata.json, config.json and model.weights.h5
/// with /layers/<layer>/vars/<i> and /optimizer/vars/<i>) or `.h5` (or `.hdf5`). A non-null `training_state` (where training is, for
/// backups) is stored too, as the root attribute tenfold_training_state (Keras ignores it).
void save_model(const models::Model& model, const std::string& path,
                const nlohmann::json& training_state = nullptr);

/// A model from a Keras model JSON file (model.to_json()): the architecture, built with fresh
/// weights, compiled as its compile_config says when it has one (Keras 3 writes it for a
/// compiled model, and model_from_json compiles with it). Unknown layer classes (Lambda
/// included) are an error.
std::unique_ptr<models::Model> load_model_json(const std::string& path);

/// Weights alone, in Keras 3's .weights.h5 layout (model.save_weights / load_weights; layers
/// matched by class and position, as Keras 3 does).
void save_weights(const models::Model& model, const std::string& path);
void load_weights(models::Model& model, const std::string& path);

/// Reads weights and optimizer state from a file into `model`, which must have the file's
/// architecture and be compiled with its optimizer (a backup of the same run), and returns
/// the training_state it was saved with (null when none). On any error the model is left as
/// it was.
nlohmann::json restore_model(models::Model& model, const std::string& path);

/// Rebuilds the model from a file: architecture, weights and, when the file holds them, the
/// compile configuration and optimizer state. Called inside a strategy's scope, the model
/// trains with that strategy.
std::unique_ptr<models::Model> load_model(const std::string& path);

}  // namespace tenfold::io
