#pragma once
// A CSV table as a Keras user prepares one with pandas:
//
//   df = pd.read_csv(path); y = df.pop(label)
//   x = pd.get_dummies(df, columns=categorical, dtype="float32").to_numpy("float32")
//
// A header row names the columns; fields may be quoted (RFC 4180). Numeric columns become
// float32 features in file order, each categorical column then one-hot columns, one per value
// in sorted order (get_dummies' order). A text column not named categorical, or a missing
// value, is an error naming the row and column and the fix.
#include <string>
#include <vector>

#include "core/tensor.h"

namespace tenfold::datasets {

struct CsvOptions {
  /// The label column: empty for features alone (prediction).
  std::string label;
  /// Text columns to one-hot encode.
  std::vector<std::string> categorical;
};

struct CsvTable {
  Tensor features;                         // float32 [rows, features]
  std::vector<std::string> feature_names;  // "age", then "color_blue", "color_red", ...
  /// int32 [rows] when the label column holds integers (written as integers, as pandas infers
  /// int64) or text (then the index of its value in class_names, sorted), float32 [rows] when
  /// it holds other numbers; empty without a label.
  Tensor labels;
  std::vector<std::string> class_names;
};

CsvTable read_csv(const std::string& path, const CsvOptions& options = {});
/// The same from the text of a CSV file; `name` (a path) is only for error messages.
CsvTable parse_csv(const std::string& text, const std::string& name, const CsvOptions& options = {});

}  // namespace tenfold::datasets
