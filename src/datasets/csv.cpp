#include "datasets/csv.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "core/error.h"

namespace tenfold::datasets {

namespace {

/// The fields of one record; quoted fields may hold commas, doubled quotes and line breaks.
/// Returns nullopt at the end of the input.
std::optional<std::vector<std::string>> read_record(std::istream& in, const std::string& path,
                                                    int64_t line) {
  if (in.peek() == std::char_traits<char>::eof()) return std::nullopt;
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (int c = in.get(); c != std::char_traits<char>::eof(); c = in.get()) {
    if (quoted) {
      if (c == '"' && in.peek() == '"') {
        fields.back() += char(in.get());
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += char(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      return fields;
    } else if (c != '\r') {
      fields.back() += char(c);
    }
  }
  if (quoted) throw Error(ErrorCode::data_loss, path + ": a quote opened on line " + std::to_string(line) + " never closes");
  return fields;
}

std::string trimmed(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t"), end = text.find_last_not_of(" \t");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

/// The field as a number, or nullopt when it is not one (all of it).
std::optional<double> number(const std::string& field) {
  std::string text = trimmed(field);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE) return std::nullopt;
  return value;
}

bool missing(const std::string& field) {
  static const std::vector<std::string> markers = {"", "NA", "N/A", "NaN", "nan", "null", "NULL", "None"};
  return std::find(markers.begin(), markers.end(), trimmed(field)) != markers.end();
}

struct Column {
  std::string name;
  std::vector<std::string> fields;
  bool numeric = true;
};

}  // namespace

CsvTable read_csv(const std::string& path, const CsvOptions& options) {
  if (!std::filesystem::is_regular_file(path)) throw Error(ErrorCode::not_found, "CSV file " + path + " does not exist");
  std::ifstream file(path, std::ios::binary);
  return parse_csv(std::string(std::istreambuf_iterator<char>(file), {}), path, options);
}

CsvTable parse_csv(const std::string& text, const std::string& path, const CsvOptions& options) {
  std::istringstream in(text);
  auto header = read_record(in, path, 1);
  if (!header || (header->size() == 1 && trimmed(header->front()).empty())) {
    throw Error(ErrorCode::invalid_argument, path + " is empty: a CSV file needs a header row naming its columns");
  }
  std::vector<Column> columns;
  for (const std::string& name : *header) columns.push_back({trimmed(name), {}, true});
  int64_t line = 1;
  while (auto record = read_record(in, path, ++line)) {
    if (record->size() == 1 && trimmed(record->front()).empty()) continue;  // a blank line
    if (record->size() != columns.size()) {
      throw Error(ErrorCode::invalid_argument,
                  path + " line " + std::to_string(line) + " has " + std::to_string(record->size()) +
                      " fields but the header names " + std::to_string(columns.size()) + " columns");
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      if (missing((*record)[c])) {
        throw Error(ErrorCode::invalid_argument,
                    path + " line " + std::to_string(line) + ": column '" + columns[c].name +
                        "' has no value ('" + (*record)[c] +
                        "'); fill or drop the rows with missing values first (pandas: df.dropna() or df.fillna(...))");
      }
      columns[c].fields.push_back((*record)[c]);
      if (columns[c].numeric && !number((*record)[c])) columns[c].numeric = false;
    }
  }
  const int64_t rows = columns.empty() ? 0 : int64_t(columns[0].fields.size());
  check_argument(rows > 0, path + " has a header but no rows of data");

  auto find_column = [&](const std::string& name, const std::string& option) -> Column& {
    for (Column& column : columns) {
      if (column.name == name) return column;
    }
    std::string names;
    for (const Column& column : columns) names += (names.empty() ? "" : ", ") + column.name;
    throw Error(ErrorCode::invalid_argument, path + " has no column '" + name + "' (" + option + "); its columns: " + names);
  };
  CsvTable table;
  const Column* label = options.label.empty() ? nullptr : &find_column(options.label, "--label");
  std::vector<const Column*> categorical;
  for (const std::string& name : options.categorical) categorical.push_back(&find_column(name, "--categorical"));
  auto is_categorical = [&](const Column& column) {
    return std::find(categorical.begin(), categorical.end(), &column) != categorical.end();
  };

  // Features: numeric columns, then one-hot columns of each categorical one.
  std::vector<std::pair<const Column*, std::string>> sources;  // (column, value for one-hot or "")
  for (const Column& column : columns) {
    if (&column == label || is_categorical(column)) continue;
    if (!column.numeric) {
      size_t row = 0;
      while (number(column.fields[row])) ++row;
      throw Error(ErrorCode::invalid_argument,
                  path + ": column '" + column.name + "' holds text ('" + column.fields[row] + "' on line " +
                      std::to_string(row + 2) + "); one-hot encode it with --categorical " + column.name +
                      ", or drop the column");
    }
    sources.emplace_back(&column, "");
    table.feature_names.push_back(column.name);
  }
  for (const Column* column : categorical) {
    std::vector<std::string> values = column->fields;
    for (std::string& value : values) value = trimmed(value);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    for (const std::string& value : values) {
      sources.emplace_back(column, value);
      table.feature_names.push_back(column->name + "_" + value);
    }
  }
  check_argument(!sources.empty(), path + " has no feature columns besides the label '" + options.label + "'");
  const int64_t width = int64_t(sources.size());
  table.features = Tensor(Shape({rows, width}));
  float* features = table.features.data<float>();
  for (int64_t f = 0; f < width; ++f) {
    const auto& [column, value] = sources[size_t(f)];
    for (int64_t r = 0; r < rows; ++r) {
      const std::string& field = column->fields[size_t(r)];
      features[r * width + f] = value.empty() ? float(*number(field)) : float(trimmed(field) == value);
    }
  }

  if (label) {
    if (!label->numeric) {  // class names, as image directories name classes: sorted
      for (const std::string& field : label->fields) table.class_names.push_back(trimmed(field));
      std::sort(table.class_names.begin(), table.class_names.end());
      table.class_names.erase(std::unique(table.class_names.begin(), table.class_names.end()),
                              table.class_names.end());
    }
    // Integers as pandas infers them: every field written as one ("85", not "85.0").
    auto integer_literal = [](const std::string& field) {
      const std::string digits = trimmed(field);
      const size_t start = !digits.empty() && (digits[0] == '+' || digits[0] == '-') ? 1 : 0;
      return digits.size() > start && digits.size() - start < 10 &&
             digits.find_first_not_of("0123456789", start) == std::string::npos;
    };
    const bool integral = label->numeric && std::all_of(label->fields.begin(), label->fields.end(), integer_literal);
    table.labels = Tensor(Shape({rows}), integral || !label->numeric ? DType::int32 : DType::float32);
    for (int64_t r = 0; r < rows; ++r) {
      const std::string& field = label->fields[size_t(r)];
      if (!label->numeric) {
        auto found = std::lower_bound(table.class_names.begin(), table.class_names.end(), trimmed(field));
        table.labels.data<int32_t>()[r] = int32_t(found - table.class_names.begin());
      } else if (integral) {
        table.labels.data<int32_t>()[r] = int32_t(*number(field));
      } else {
        table.labels.data<float>()[r] = float(*number(field));
      }
    }
  }
  return table;
}

}  // namespace tenfold::datasets
