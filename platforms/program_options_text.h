// The text of a Boost.Program_options error, built without calling its what().
//
// Boost's what() fills each %placeholder% of its template by searching the whole message again
// after every replacement, so a value that holds its own placeholder never stops being replaced:
// `kvtier run --%canonical_option%`, or a platform file line holding "%invalid_line%", made the
// command spin for ever. Every message kvtier builds from a program_options error goes through
// program_options_text(), which fills each placeholder once, left to right.
#pragma once

#include <boost/program_options/errors.hpp>
#include <string>

namespace kvtier {

// What e.what() says for ordinary input, computed in one pass over Boost's template.
std::string program_options_text(const boost::program_options::error& e);

// `text` with every byte outside printable ASCII written as \xNN, cut to `limit` bytes with
// "..." after, for quoting what a user wrote inside a message.
std::string quoted_for_message(const std::string& text, std::size_t limit = 80);

}  // namespace kvtier
