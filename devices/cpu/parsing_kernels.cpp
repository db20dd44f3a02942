// CPU kernels that parse records: ParseExample (tf.train.Example protos, decoded by
// example_proto.hpp, into dense tensors and sparse components), SequenceExampleFeatureList (a
// SequenceExample's feature list as Examples for ParseExample), DecodeCSV (CSV records into
// columns), StringToNumber, StringSplit (text into tokens) and DecodeRaw (the bytes of
// equal-length strings as numbers). Bad input is InvalidArgument naming the node and, where
// TensorFlow's messages do, the record's index and the feature or field.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/example_proto.hpp"
#include "troupe/graph/core/protobuf_wire.hpp"

namespace troupe {
namespace {

class ParseExampleKernel : public OpKernel {
 public:
  explicit ParseExampleKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        num_sparse_(static_cast<int>(c.attr<int64_t>("Nsparse"))),
        num_dense_(static_cast<int>(c.attr<int64_t>("Ndense"))),
        sparse_types_(c.attr<std::vector<DataType>>("sparse_types")),
        dense_types_(c.attr<std::vector<DataType>>("Tdense")),
        dense_shapes_(c.attr<std::vector<PartialShape>>("dense_shapes")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& serialized = ctx.input(0);
    if (serialized.rank() != 1) {
      return ctx.fail_invalid("serialized must be a vector of records, got shape {}",
                              serialized.shape().to_string());
    }
    const Tensor& names = ctx.input(1);
    auto records = serialized.flat<std::string>();
    auto batch = static_cast<int64_t>(records.size());
    std::vector<std::map<std::string, ExampleFeature, std::less<>>> examples;
    for (int64_t b = 0; b < batch; ++b) {
      std::string what = record_name(names, b);
      auto example = decode_example(records[b], what);
      if (!example.ok()) {
        return ctx.fail_invalid("could not parse {} as an Example: {}", what,
                                example.status().message());
      }
      examples.push_back(std::move(example).value());
    }
    int sparse_keys = 2, dense_keys = 2 + num_sparse_, defaults = dense_keys + num_dense_;
    for (int i = 0; i < num_sparse_; ++i) {
      if (!parse_sparse(ctx, examples, names, i, key(ctx, sparse_keys + i))) return;
    }
    for (int i = 0; i < num_dense_; ++i) {
      if (!parse_dense(ctx, examples, names, i, key(ctx, dense_keys + i),
                       ctx.input(defaults + i))) {
        return;
      }
    }
  }

 private:
  static std::string record_name(const Tensor& names, int64_t b) {
    if (names.num_elements() > b) {
      return fmt::format("record {} ('{}')", b, names.flat<std::string>()[b]);
    }
    return fmt::format("record {}", b);
  }

  static std::string key(const OpKernelContext& ctx, int input) {
    const Tensor& t = ctx.input(input);
    return t.num_elements() == 1 ? t.flat<std::string>()[0] : std::string();
  }

  // A present feature of the wrong kind fails naming it.
  static bool check_kind(OpKernelContext& ctx, const ExampleFeature& feature, DataType expected,
                         const std::string& what, const std::string& key) {
    if (feature.dtype == expected || feature.size() == 0) return true;
    ctx.fail_invalid(
        "{}, feature '{}': data types don't match: the record has {}, the feature "
        "is declared {}",
        what, key, dtype_name(feature.dtype), dtype_name(expected));
    return false;
  }

  // Copies `count` values of `feature` (of dtype t) into `out` from element `at`.
  static void copy_values(const ExampleFeature& feature, DataType t, Tensor& out, int64_t at) {
    if (t == DataType::kString) {
      std::copy(feature.bytes.begin(), feature.bytes.end(), out.data<std::string>() + at);
    } else if (t == DataType::kFloat) {
      std::copy(feature.floats.begin(), feature.floats.end(), out.data<float>() + at);
    } else {
      std::copy(feature.ints.begin(), feature.ints.end(), out.data<int64_t>() + at);
    }
  }

  bool parse_dense(OpKernelContext& ctx,
                   const std::vector<std::map<std::string, ExampleFeature, std::less<>>>& examples,
                   const Tensor& names, int i, const std::string& key, const Tensor& fallback) {
    const PartialShape& shape = dense_shapes_[i];
    DataType t = dense_types_[i];
    if (shape.rank_known() && shape.rank() > 0 && shape.dim(0) == -1) {
      return parse_sequence(ctx, examples, names, i, key, fallback);
    }
    if (!shape.is_fully_defined()) {
      ctx.fail_invalid("dense_shapes[{}] ({}) for feature '{}' must be fully defined", i,
                       shape.to_string(), key);
      return false;
    }
    int64_t per_record = shape.num_elements();
    if (fallback.num_elements() != 0 && fallback.num_elements() != per_record) {
      ctx.fail_invalid("the default of feature '{}' has {} values, its shape {} needs {}", key,
                       fallback.num_elements(), shape.to_string(), per_record);
      return false;
    }
    std::vector<int64_t> dims{static_cast<int64_t>(examples.size())};
    dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
    Tensor& out = ctx.allocate_output(3 * num_sparse_ + i, TensorShape(dims));
    for (size_t b = 0; b < examples.size(); ++b) {
      int64_t at = static_cast<int64_t>(b) * per_record;
      auto found = examples[b].find(key);
      if (found == examples[b].end() || found->second.size() == 0) {
        if (fallback.num_elements() == 0) {
          ctx.fail_invalid("{}: feature '{}' (data type: {}) is required but could not be found",
                           record_name(names, static_cast<int64_t>(b)), key, dtype_name(t));
          return false;
        }
        if (per_record > 0) copy_default(fallback, out, at, per_record);
        continue;
      }
      const ExampleFeature& feature = found->second;
      std::string what = record_name(names, static_cast<int64_t>(b));
      if (!check_kind(ctx, feature, t, what, key)) return false;
      if (static_cast<int64_t>(feature.size()) != per_record) {
        ctx.fail_invalid("{}, feature '{}': {} values, but the shape {} needs {}", what, key,
                         feature.size(), shape.to_string(), per_record);
        return false;
      }
      copy_values(feature, t, out, at);
    }
    return true;
  }

  // A dense shape (-1, D1, ..., DN) (FixedLenSequenceFeature): each record holds any number of
  // blocks of D1 x ... x DN values; the output is [batch, most blocks, D1, ..., DN], the records
  // with fewer blocks (or none) padded with the scalar default.
  bool parse_sequence(
      OpKernelContext& ctx,
      const std::vector<std::map<std::string, ExampleFeature, std::less<>>>& examples,
      const Tensor& names, int i, const std::string& key, const Tensor& padding) {
    const PartialShape& shape = dense_shapes_[i];
    DataType t = dense_types_[i];
    std::vector<int64_t> block_dims(shape.dims().begin() + 1, shape.dims().end());
    PartialShape block_shape(block_dims);
    if (!block_shape.is_fully_defined()) {
      ctx.fail_invalid(
          "dense_shapes[{}] ({}) for feature '{}': only its first dimension may be "
          "unknown",
          i, shape.to_string(), key);
      return false;
    }
    if (padding.num_elements() != 1) {
      ctx.fail_invalid(
          "the padding value of feature '{}' (a sequence of shape {}) must be one "
          "value, got {}",
          key, shape.to_string(), padding.num_elements());
      return false;
    }
    const int64_t block = block_shape.num_elements();
    std::vector<const ExampleFeature*> present(examples.size(), nullptr);
    int64_t most = 0;
    for (size_t b = 0; b < examples.size(); ++b) {
      auto found = examples[b].find(key);
      if (found == examples[b].end() || found->second.size() == 0) continue;
      const ExampleFeature& feature = found->second;
      std::string what = record_name(names, static_cast<int64_t>(b));
      if (!check_kind(ctx, feature, t, what, key)) return false;
      auto size = static_cast<int64_t>(feature.size());
      if (block == 0 || size % block != 0) {
        ctx.fail_invalid(
            "{}, feature '{}': {} values are not a whole number of blocks of {} "
            "(the shape {})",
            what, key, size, block, shape.to_string());
        return false;
      }
      present[b] = &feature;
      most = std::max(most, size / block);
    }
    std::vector<int64_t> dims{static_cast<int64_t>(examples.size()), most};
    dims.insert(dims.end(), block_dims.begin(), block_dims.end());
    Tensor& out = ctx.allocate_output(3 * num_sparse_ + i, TensorShape(dims));
    const int64_t per_record = most * block;
    for (size_t b = 0; b < examples.size(); ++b) {
      int64_t at = static_cast<int64_t>(b) * per_record;
      int64_t filled = 0;
      if (present[b] != nullptr) {
        copy_values(*present[b], t, out, at);
        filled = static_cast<int64_t>(present[b]->size());
      }
      for (int64_t k = filled; k < per_record; ++k)
        copy_default(padding, out, at + k, 1);
    }
    return true;
  }

  static void copy_default(const Tensor& from, Tensor& out, int64_t at, int64_t count) {
    switch (from.dtype()) {
      case DataType::kString:
        std::copy_n(from.data<std::string>(), count, out.data<std::string>() + at);
        break;
      case DataType::kFloat:
        std::copy_n(from.data<float>(), count, out.data<float>() + at);
        break;
      default:
        std::copy_n(from.data<int64_t>(), count, out.data<int64_t>() + at);
        break;
    }
  }

  bool parse_sparse(OpKernelContext& ctx,
                    const std::vector<std::map<std::string, ExampleFeature, std::less<>>>& examples,
                    const Tensor& names, int i, const std::string& key) {
    DataType t = sparse_types_[i];
    int64_t total = 0, longest = 0;
    for (size_t b = 0; b < examples.size(); ++b) {
      auto found = examples[b].find(key);
      if (found == examples[b].end()) continue;
      if (!check_kind(ctx, found->second, t, record_name(names, static_cast<int64_t>(b)), key)) {
        return false;
      }
      auto n = static_cast<int64_t>(found->second.size());
      total += n;
      longest = std::max(longest, n);
    }
    Tensor& indices = ctx.allocate_output(i, TensorShape{total, 2});
    Tensor& values = ctx.allocate_output(num_sparse_ + i, TensorShape{total});
    Tensor& shape = ctx.allocate_output(2 * num_sparse_ + i, TensorShape{2});
    shape.data<int64_t>()[0] = static_cast<int64_t>(examples.size());
    shape.data<int64_t>()[1] = longest;
    int64_t at = 0;
    for (size_t b = 0; b < examples.size(); ++b) {
      auto found = examples[b].find(key);
      if (found == examples[b].end()) continue;
      auto n = static_cast<int64_t>(found->second.size());
      for (int64_t j = 0; j < n; ++j) {
        indices.data<int64_t>()[2 * (at + j)] = static_cast<int64_t>(b);
        indices.data<int64_t>()[2 * (at + j) + 1] = j;
      }
      if (n > 0) copy_values(found->second, t, values, at);
      at += n;
    }
    return true;
  }

  int num_sparse_, num_dense_;
  std::vector<DataType> sparse_types_, dense_types_;
  std::vector<PartialShape> dense_shapes_;
};

// TensorFlow's numbers (strings::safe_strto32/64, safe_strtof/d): white space around them
// (isspace), integers with an optional '-'; reals with an optional sign, "inf" and "nan" in
// any case, hexadecimal integers ("0x1A"), shorter than 32 characters, infinite (or 0)
// beyond the type's range.
std::string_view trimmed(std::string_view text) {
  auto space = [](char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\v' || ch == '\f' || ch == '\r';
  };
  while (!text.empty() && space(text.front()))
    text.remove_prefix(1);
  while (!text.empty() && space(text.back()))
    text.remove_suffix(1);
  return text;
}

template <class T>
bool parse_integer(std::string_view text, T& value) {
  text = trimmed(text);
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

template <class T>
bool parse_real(std::string_view field, T& value) {
  constexpr size_t kLongest = 31;  // TensorFlow's conversion buffer holds 32 bytes
  if (field.size() > kLongest) return false;
  std::string_view text = trimmed(field);
  if (text.empty()) {  // white space only: TensorFlow's converter reads it as 0
    value = T(0);
    return !field.empty();
  }
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return false;
  auto lower = [](std::string_view t) {  // ASCII only, whatever the locale
    std::string out(t);
    for (char& ch : out)
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    return out;
  };
  std::string word = lower(text.substr(0, 3));
  if (word == "inf" || word == "nan") {
    if (text.size() != 3) return false;  // not "infinity" or "nan(...)"
    value =
        word == "inf" ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
    if (negative) value = -value;
    return true;
  }
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    double whole = 0;
    for (char ch : text.substr(2)) {
      int digit = ch >= '0' && ch <= '9'   ? ch - '0'
                  : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                  : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                           : -1;
      if (digit < 0) return false;
      whole = whole * 16 + digit;
    }
    value = static_cast<T>(negative ? -whole : whole);
    return true;
  }
  if (text[0] == '+' || text[0] == '-') return false;  // one sign
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (end != text.data() + text.size()) return false;
  if (error == std::errc::result_out_of_range) {
    // Beyond T's range: within 31 characters only an exponent gets there, and its sign says
    // which way (infinite, or 0), whatever the locale.
    const size_t e = text.find_last_of("eE");
    const bool tiny = e != std::string_view::npos && e + 1 < text.size() && text[e + 1] == '-';
    value = tiny ? T(0) : std::numeric_limits<T>::infinity();
  } else if (error != std::errc()) {
    return false;
  }
  if (negative) value = -value;
  return true;
}

// DecodeCSV as TensorFlow 1.x parses: RFC 4180 fields, quotes doubled inside a quoted field
// (unless use_quote_delim is false), line breaks skipped at a field's start; with select_cols,
// parsing stops after the last selected column. Numbers may have spaces around them.
class DecodeCSVKernel : public OpKernel {
 public:
  explicit DecodeCSVKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        types_(c.attr<std::vector<DataType>>("OUT_TYPE")),
        delim_(c.attr<std::string>("field_delim").at(0)),  // one char: the shape function checks
        use_quote_delim_(c.attr<bool>("use_quote_delim")),
        na_value_(c.attr<std::string>("na_value")),
        select_cols_(c.attr<std::vector<int64_t>>("select_cols")) {}

  void compute(OpKernelContext& ctx) override {
    const int columns = static_cast<int>(types_.size());
    for (int f = 0; f < columns; ++f) {
      if (ctx.input(1 + f).rank() > 1) {
        return ctx.fail_invalid(
            "Each record default should be at most rank 1 (field {} has "
            "shape {})",
            f, ctx.input(1 + f).shape().to_string());
      }
      if (ctx.input(1 + f).num_elements() > 1) {
        return ctx.fail_invalid("There should only be 1 default per field but field {} has {}", f,
                                ctx.input(1 + f).num_elements());
      }
    }
    const Tensor& records = ctx.input(0);
    std::vector<Tensor*> outputs;
    for (int f = 0; f < columns; ++f)
      outputs.push_back(&ctx.allocate_output(f, records.shape()));
    auto lines = records.flat<std::string>();
    std::vector<std::string> fields;
    for (size_t r = 0; r < lines.size(); ++r) {
      if (!extract_fields(ctx, lines[r], fields)) return;
      if (static_cast<int>(fields.size()) != columns) {
        return ctx.fail_invalid("Expect {} fields but have {} in record {}", columns, fields.size(),
                                r);
      }
      for (int f = 0; f < columns; ++f) {
        if (!store(ctx, f, r, fields[f], *outputs[f])) return;
      }
    }
  }

 private:
  // The fields of `record` (the selected ones only, with select_cols) into `fields`.
  bool extract_fields(OpKernelContext& ctx, std::string_view record,
                      std::vector<std::string>& fields) const {
    fields.clear();
    const size_t size = record.size();
    size_t at = 0, column = 0, selected = 0;
    auto wanted = [&] {
      return select_cols_.empty() || (selected < select_cols_.size() &&
                                      select_cols_[selected] == static_cast<int64_t>(column));
    };
    while (at < size) {
      if (record[at] == '\n' || record[at] == '\r') {
        ++at;
        continue;
      }
      std::string field;
      if (use_quote_delim_ && record[at] == '"') {
        ++at;
        // A quoted field ends with a quote followed by the delimiter or the end.
        while (at + 1 < size && (record[at] != '"' || record[at + 1] != delim_)) {
          if (record[at] != '"') {
            field += record[at++];
          } else if (record[at + 1] == '"') {
            field += '"';
            at += 2;
          } else {
            ctx.fail_invalid("Quote inside a string has to be escaped by another quote");
            return false;
          }
        }
        if (!(at < size && record[at] == '"' && (at == size - 1 || record[at + 1] == delim_))) {
          ctx.fail_invalid("Quoted field has to end with quote followed by delim or end");
          return false;
        }
        at += 2;
      } else {
        for (; at < size && record[at] != delim_; ++at) {
          char ch = record[at];
          if ((use_quote_delim_ && ch == '"') || ch == '\n' || ch == '\r') {
            ctx.fail_invalid("Unquoted fields cannot have quotes/CRLFs inside");
            return false;
          }
          field += ch;
        }
        ++at;  // past the delimiter
      }
      if (wanted()) {
        fields.push_back(std::move(field));
        ++selected;
        if (!select_cols_.empty() && selected == select_cols_.size()) return true;
      }
      ++column;
    }
    // A record ending with the delimiter has an empty last field.
    if (size > 0 && record[size - 1] == delim_ && wanted()) fields.emplace_back();
    return true;
  }

  bool store(OpKernelContext& ctx, int f, size_t r, const std::string& field, Tensor& out) const {
    DataType t = types_[f];
    if (field.empty() || field == na_value_) {
      const Tensor& fallback = ctx.input(1 + f);
      if (fallback.num_elements() != 1) {
        ctx.fail_invalid("Field {} is required but missing in record {}!", f, r);
        return false;
      }
      TROUPE_SWITCH_NUMERIC_OR_BOOL(t, T, out.data<T>()[r] = fallback.data<T>()[0]; return true);
      out.data<std::string>()[r] = fallback.data<std::string>()[0];
      return true;
    }
    bool parsed = false;
    switch (t) {
      case DataType::kInt32:
        parsed = parse_integer(field, out.data<int32_t>()[r]);
        break;
      case DataType::kInt64:
        parsed = parse_integer(field, out.data<int64_t>()[r]);
        break;
      case DataType::kFloat:
        parsed = parse_real(field, out.data<float>()[r]);
        break;
      case DataType::kDouble:
        parsed = parse_real(field, out.data<double>()[r]);
        break;
      default:
        out.data<std::string>()[r] = field;
        return true;
    }
    if (!parsed) {
      // TensorFlow's words for the types: float, double, int32, int64.
      std::string_view type = t == DataType::kFloat    ? "float"
                              : t == DataType::kDouble ? "double"
                                                       : dtype_name(t);
      ctx.fail_invalid("Field {} in record {} is not a valid {}: {}", f, r, type, field);
    }
    return parsed;
  }

  std::vector<DataType> types_;
  char delim_;
  bool use_quote_delim_;
  std::string na_value_;
  std::vector<int64_t> select_cols_;
};

// StringSplit as TensorFlow 1.x's: any character of the delimiter splits; an empty delimiter
// splits into bytes.
class StringSplitKernel : public OpKernel {
 public:
  explicit StringSplitKernel(const OpKernelConstruction& c)
      : OpKernel(c), skip_empty_(c.attr<bool>("skip_empty")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& delimiter = ctx.input(1);
    if (input.rank() != 1) {
      return ctx.fail_invalid("input must be a vector, got shape: {}", input.shape().to_string());
    }
    if (delimiter.rank() != 0) {
      return ctx.fail_invalid("delimiter must be a scalar, got shape: {}",
                              delimiter.shape().to_string());
    }
    const std::string& separators = delimiter.flat<std::string>()[0];
    auto strings = input.flat<std::string>();
    std::vector<std::pair<int64_t, std::string_view>> tokens;  // (row, token)
    std::vector<int64_t> per_row(strings.size(), 0);
    for (size_t row = 0; row < strings.size(); ++row) {
      std::string_view text = strings[row];
      auto add = [&](std::string_view token) {
        if (skip_empty_ && token.empty()) return;
        tokens.emplace_back(static_cast<int64_t>(row), token);
        ++per_row[row];
      };
      if (separators.empty()) {
        for (size_t i = 0; i < text.size(); ++i)
          add(text.substr(i, 1));
        continue;
      }
      size_t begin = 0;
      for (;;) {
        size_t end = text.find_first_of(separators, begin);
        if (end == std::string_view::npos) {
          add(text.substr(begin));
          break;
        }
        add(text.substr(begin, end - begin));
        begin = end + 1;
      }
    }
    auto count = static_cast<int64_t>(tokens.size());
    Tensor& indices = ctx.allocate_output(0, TensorShape{count, 2});
    Tensor& values = ctx.allocate_output(1, TensorShape{count});
    Tensor& shape = ctx.allocate_output(2, TensorShape{2});
    std::vector<int64_t> column(strings.size(), 0);
    for (int64_t i = 0; i < count; ++i) {
      auto [row, token] = tokens[static_cast<size_t>(i)];
      indices.data<int64_t>()[2 * i] = row;
      indices.data<int64_t>()[2 * i + 1] = column[static_cast<size_t>(row)]++;
      values.data<std::string>()[i] = std::string(token);
    }
    shape.data<int64_t>()[0] = static_cast<int64_t>(strings.size());
    shape.data<int64_t>()[1] =
        per_row.empty() ? 0 : *std::max_element(per_row.begin(), per_row.end());
  }

 private:
  bool skip_empty_;
};

template <class T>
class DecodeRawKernel : public OpKernel {
 public:
  explicit DecodeRawKernel(const OpKernelConstruction& c)
      : OpKernel(c), little_endian_(c.attr<bool>("little_endian")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    auto strings = input.flat<std::string>();
    size_t length = strings.empty() ? 0 : strings[0].size();
    for (size_t i = 0; i < strings.size(); ++i) {
      if (strings[i].size() != length) {
        return ctx.fail_invalid(
            "DecodeRaw requires input strings to all be the same size, but element {} has size "
            "{} != {}",
            i, strings[i].size(), length);
      }
    }
    if (length % sizeof(T) != 0) {
      return ctx.fail_invalid(
          "Input to DecodeRaw has length {} that is not a multiple of {}, the size of {}", length,
          sizeof(T), dtype_name(dtype_of<T>));
    }
    std::vector<int64_t> dims = input.shape().dims();
    auto per_string = static_cast<int64_t>(length / sizeof(T));
    dims.push_back(per_string);
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    auto* data = reinterpret_cast<char*>(out.data<T>());
    for (size_t i = 0; i < strings.size(); ++i)
      std::memcpy(data + i * length, strings[i].data(), length);
    bool swap = little_endian_ != (std::endian::native == std::endian::little);
    if (swap) {
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        char* p = data + i * sizeof(T);
        std::reverse(p, p + sizeof(T));
      }
    }
  }

 private:
  bool little_endian_;
};

}  // namespace

// StringToNumber: each string as a number of out_type, read as TensorFlow reads numbers
// (above); one that is not is TensorFlow's InvalidArgument naming it.
class StringToNumberKernel : public OpKernel {
 public:
  explicit StringToNumberKernel(const OpKernelConstruction& c)
      : OpKernel(c), type_(c.attr<DataType>("out_type")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    if (in.dtype() != DataType::kString) {
      return ctx.fail_invalid("string_tensor must be a string tensor, got {}",
                              dtype_name(in.dtype()));
    }
    Tensor out(type_, in.shape());
    auto strings = in.flat<std::string>();
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      bool parsed = false;
      switch (type_) {
        case DataType::kInt32:
          parsed = parse_integer(strings[i], out.data<int32_t>()[i]);
          break;
        case DataType::kInt64:
          parsed = parse_integer(strings[i], out.data<int64_t>()[i]);
          break;
        case DataType::kFloat:
          parsed = parse_real(strings[i], out.data<float>()[i]);
          break;
        case DataType::kDouble:
          parsed = parse_real(strings[i], out.data<double>()[i]);
          break;
        default:
          return ctx.fail_invalid("out_type must be float32, float64, int32 or int64, got {}",
                                  dtype_name(type_));
      }
      if (!parsed) {
        return ctx.fail_invalid("StringToNumberOp could not correctly convert string: {}",
                                strings[i]);
      }
    }
    ctx.set_output(0, std::move(out));
  }

 private:
  DataType type_;
};

// SequenceExampleFeatureList: the steps of one feature list of a SequenceExample, each as a
// serialized Example {feature_list_key: the step's Feature}, so that ParseExample parses them
// as a batch: FixedLenFeature(shape) gives [steps] + shape, VarLenFeature [steps, longest]
// (python/troupe/parsing_ops.py, parse_single_sequence_example). A missing list is no steps,
// or, `required`, TensorFlow's InvalidArgument naming it.
class SequenceExampleFeatureListKernel : public OpKernel {
 public:
  explicit SequenceExampleFeatureListKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        key_(c.attr<std::string>("feature_list_key")),
        required_(c.attr<bool>("required")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& serialized = ctx.input(0);
    const Tensor& debug_name = ctx.input(1);
    if (serialized.rank() != 0 || debug_name.rank() != 0) {
      return ctx.fail_invalid("serialized and debug_name must be scalars, got shapes {} and {}",
                              serialized.shape().to_string(), debug_name.shape().to_string());
    }
    const std::string& name = debug_name.scalar<std::string>();
    const std::string what = name.empty() ? "<unknown>" : name;
    auto steps = decode_feature_list(serialized.scalar<std::string>(), key_, what);
    if (!steps.ok()) {
      return ctx.fail_invalid("Could not parse example input, value of {} as a SequenceExample: {}",
                              what, steps.status().message());
    }
    if (!steps->has_value() && required_) {
      return ctx.fail_invalid(
          "Name: {}, Feature list '{}' is required but could not be found.  Did you mean to "
          "include it in feature_list_dense_missing_assumed_empty or "
          "feature_list_dense_defaults?",
          what, key_);
    }
    const std::vector<std::string_view> none;
    const std::vector<std::string_view>& features = steps->has_value() ? **steps : none;
    Tensor out(DataType::kString, TensorShape({static_cast<int64_t>(features.size())}));
    for (size_t i = 0; i < features.size(); ++i) {
      std::string entry, map;
      proto::put_bytes(entry, 1, key_);
      proto::put_bytes(entry, 2, features[i]);
      proto::put_bytes(map, 1, entry);
      std::string example;
      proto::put_bytes(example, 1, map);
      out.flat<std::string>()[i] = std::move(example);
    }
    ctx.set_output(0, std::move(out));
  }

 private:
  std::string key_;
  bool required_;
};

void register_parsing_kernels(KernelRegistry& r) {
  must_add_kernel(r, "ParseExample", kCpu, simple_kernel<ParseExampleKernel>());
  must_add_kernel(r, "DecodeCSV", kCpu, simple_kernel<DecodeCSVKernel>());
  must_add_kernel(r, "StringToNumber", kCpu, simple_kernel<StringToNumberKernel>());
  must_add_kernel(r, "SequenceExampleFeatureList", kCpu,
                  simple_kernel<SequenceExampleFeatureListKernel>());
  must_add_kernel(r, "StringSplit", kCpu, simple_kernel<StringSplitKernel>());
  must_add_kernel(r, "DecodeRaw", kCpu,
                  [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
                    DataType t = c.attr<DataType>("out_type");
                    switch (t) {
                      case DataType::kFloat:
                        return std::unique_ptr<OpKernel>(new DecodeRawKernel<float>(c));
                      case DataType::kDouble:
                        return std::unique_ptr<OpKernel>(new DecodeRawKernel<double>(c));
                      case DataType::kInt32:
                        return std::unique_ptr<OpKernel>(new DecodeRawKernel<int32_t>(c));
                      case DataType::kInt64:
                        return std::unique_ptr<OpKernel>(new DecodeRawKernel<int64_t>(c));
                      case DataType::kUint8:
                        return std::unique_ptr<OpKernel>(new DecodeRawKernel<uint8_t>(c));
                      default:
                        return errors::Unimplemented("node '{}' (DecodeRaw): no kernel for {}",
                                                     c.name(), dtype_name(t));
                    }
                  });
}

}  // namespace troupe
