// parse_npy_header: a recursive-descent reader of the .npy header's Python literal dict.
#include "troupe/graph/formats/npy_header.hpp"

#include <cstdint>

namespace troupe {
namespace {

// Parses the Python literal dict of a .npy header, byte by byte.
class NpyHeaderParser {
 public:
  NpyHeaderParser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  Status parse(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    if (!consume('{')) return corrupt("expected '{'");
    while (true) {
      skip_ws();
      if (consume('}')) break;
      std::string key;
      TROUPE_RETURN_IF_ERROR(parse_string(&key));
      skip_ws();
      if (!consume(':')) return corrupt("expected ':' after '" + key + "'");
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') {
          return errors::InvalidArgument(
              "{}: structured dtypes are not supported; expected one of <f4 <f8 <i4 <i8 |b1",
              what_);
        }
        TROUPE_RETURN_IF_ERROR(parse_string(descr));
        have_descr = true;
      } else if (key == "fortran_order") {
        TROUPE_RETURN_IF_ERROR(parse_bool(fortran_order));
        have_order = true;
      } else if (key == "shape") {
        TROUPE_RETURN_IF_ERROR(parse_tuple(shape));
        have_shape = true;
      } else {
        return corrupt("unexpected key '" + key + "'");
      }
      skip_ws();
      if (consume(',')) continue;
      skip_ws();
      if (consume('}')) break;
      return corrupt("expected ',' or '}'");
    }
    skip_ws();
    if (i_ != s_.size()) return corrupt("text after the closing '}'");
    if (!have_descr) return corrupt("no 'descr'");
    if (!have_order) return corrupt("no 'fortran_order'");
    if (!have_shape) return corrupt("no 'shape'");
    return Status::OK();
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool consume(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t'))
      ++i_;
  }
  Status corrupt(const std::string& why) const {
    return errors::DataLoss("{}: malformed .npy header at byte {} ({}): {}", what_, i_, why,
                            std::string(s_));
  }
  Status parse_string(std::string* out) {
    char quote = peek();
    if (quote != '\'' && quote != '"') return corrupt("expected a quoted string");
    ++i_;
    out->clear();
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out->push_back(s_[i_++]);
    }
    if (!consume(quote)) return corrupt("unterminated string");
    return Status::OK();
  }
  Status parse_bool(bool* out) {
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      *out = true;
    } else if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      *out = false;
    } else {
      return corrupt("expected True or False");
    }
    return Status::OK();
  }
  Status parse_tuple(std::vector<int64_t>* out) {
    out->clear();
    if (!consume('(')) return corrupt("expected '(' for the shape");
    while (true) {
      skip_ws();
      if (consume(')')) return Status::OK();
      if (peek() < '0' || peek() > '9') return corrupt("expected a dimension");
      int64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (value > (INT64_MAX - 9) / 10) return corrupt("dimension too large");
        value = value * 10 + (s_[i_++] - '0');
      }
      consume('L');  // Python 2 longs
      out->push_back(value);
      skip_ws();
      if (consume(',')) continue;
      skip_ws();
      if (consume(')')) return Status::OK();
      return corrupt("expected ',' or ')' in the shape");
    }
  }

  std::string_view s_;
  const std::string& what_;
  size_t i_ = 0;
};

}  // namespace

StatusOr<NpyHeader> parse_npy_header(std::string_view text, const std::string& what) {
  NpyHeader header;
  NpyHeaderParser parser(text, what);
  TROUPE_RETURN_IF_ERROR(parser.parse(&header.descr, &header.fortran_order, &header.shape));
  return header;
}

}  // namespace troupe
