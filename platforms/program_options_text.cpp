#include "platforms/program_options_text.h"

#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace kvtier {
namespace po = boost::program_options;

namespace {

// Reads the protected parts of an error_with_option_name (its template's values, the phrases
// that stand in for missing values, and the option's prefix). Never constructed: the pointers
// to members name the base class's own members.
struct ErrorParts : po::error_with_option_name {
  static const std::map<std::string, std::string>& values(const po::error_with_option_name& e) {
    return e.*(&ErrorParts::m_substitutions);
  }
  static const std::map<std::string, string_pair>& defaults(const po::error_with_option_name& e) {
    return e.*(&ErrorParts::m_substitution_defaults);
  }
  static std::string prefix(const po::error_with_option_name& e) {
    return (e.*(&ErrorParts::get_canonical_option_prefix))();
  }
};

// Every occurrence of `from` in `text` replaced by `to`, the replacement never searched again.
std::string replace_once_each(const std::string& text, const std::string& from,
                              const std::string& to) {
  if (from.empty()) return text;
  std::string out;
  std::size_t at = 0;
  for (std::size_t hit; (hit = text.find(from, at)) != std::string::npos; at = hit + from.size())
    out.append(text, at, hit - at).append(to);
  return out.append(text, at, std::string::npos);
}

}  // namespace

std::string program_options_text(const po::error& e) {
  const auto* named = dynamic_cast<const po::error_with_option_name*>(&e);
  // The other errors (too many positional options, a file that cannot be read, kvtier's own
  // po::error texts) hold a finished message.
  if (!named) return e.what();
  std::map<std::string, std::string> values = ErrorParts::values(*named);
  values["canonical_option"] = named->get_option_name();
  values["prefix"] = ErrorParts::prefix(*named);
  // Boost's own phrases for a value it does not have ("option '%canonical_option%'" becomes
  // "option"); these hold no user text, so plain replacement ends.
  std::string text = named->m_error_template;
  for (const auto& [name, phrase] : ErrorParts::defaults(*named)) {
    const auto v = values.find(name);
    if (v == values.end() || v->second.empty())
      text = replace_once_each(text, phrase.first, phrase.second);
  }
  // One pass: a %name% of the template becomes its value; what the value says is not read.
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t open = text.find('%', at);
    if (open == std::string::npos) {
      out.append(text, at, std::string::npos);
      break;
    }
    out.append(text, at, open - at);
    const std::size_t close = text.find('%', open + 1);
    const auto v = close == std::string::npos
                       ? values.end()
                       : values.find(text.substr(open + 1, close - open - 1));
    if (v == values.end()) {
      out += '%';
      at = open + 1;
    } else {
      out += v->second;
      at = close + 1;
    }
  }
  if (const auto* ambiguous = dynamic_cast<const po::ambiguous_option*>(&e)) {
    // Boost's wording: the distinct names, sorted, the last after "and".
    const std::set<std::string> names(ambiguous->alternatives().begin(),
                                      ambiguous->alternatives().end());
    if (!names.empty()) {
      out += " and matches ";
      if (names.size() == 1 && ambiguous->alternatives().size() > 1)
        out += "different versions of ";
      std::size_t i = 0;
      for (const auto& name : names) {
        if (i++ && i == names.size()) out += "and ";
        out += "'" + values["prefix"] + name + "'" + (i < names.size() ? ", " : "");
      }
    }
  }
  return out;
}

std::string quoted_for_message(const std::string& text, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

}  // namespace kvtier
