#pragma once
// A choice that a platform key spells as a word and the models hold as an enum: its words are
// written once, in a table of EnumName, which both the key declaration (the accepted words and
// the "one of ..." range, in table order) and name_of() read.
#include <cstddef>
#include <optional>
#include <string>

namespace kvtier {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The word of `value` in `table` ("?" if the table lacks it).
template <typename E, std::size_t N>
constexpr const char* name_in(const EnumName<E> (&table)[N], E value) {
  for (const EnumName<E>& n : table)
    if (n.value == value) return n.name;
  return "?";
}

// The value whose word in `table` is `word`; nothing if none is.
template <typename E, std::size_t N>
std::optional<E> value_in(const EnumName<E> (&table)[N], const std::string& word) {
  for (const EnumName<E>& n : table)
    if (word == n.name) return n.value;
  return std::nullopt;
}

}  // namespace kvtier
