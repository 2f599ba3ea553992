#pragma once
// "Did you mean" for a name the user mistyped (an unknown platform key, option, command or
// workload key): the known name nearest in edit distance, when it is near enough to be the
// likely intent. Plain C++.
#include <algorithm>
#include <string>
#include <vector>

namespace kvtier {

// Levenshtein distance (insertions, deletions, substitutions), with an adjacent transposition
// counted as one edit: the typos people make.
inline size_t edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

// The candidate nearest to `word`, or "" when none is within a third of the word's length
// (at least 2 edits): past that the suggestion would be a guess. Ties go to the earliest
// candidate, so the answer does not depend on anything but the list's order. A candidate that
// ends with the word after a "section." prefix (kv_budget_gib for hbm.kv_budget_gib) counts as
// one edit away.
inline std::string closest_name(const std::string& word,
                                const std::vector<std::string>& candidates) {
  // Names are short; a long word is no typo of one, and its distance to each would cost
  // length x length (a fuzzer's megabyte key).
  constexpr size_t kLongest = 64;
  if (word.empty() || word.size() > kLongest) return "";
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    if (c.size() > kLongest) continue;
    size_t dist = edit_distance(word, c);
    const size_t dot = c.find('.');
    if (dot != std::string::npos && word.find('.') == std::string::npos &&
        c.substr(dot + 1) == word)
      dist = 1;
    if (dist < best_distance) best_distance = dist, best = c;
  }
  return best;
}

// " (did you mean 'x'?)", or "" when nothing is near.
inline std::string did_you_mean(const std::string& word,
                                const std::vector<std::string>& candidates) {
  const std::string c = closest_name(word, candidates);
  return c.empty() ? "" : " (did you mean '" + c + "'?)";
}

}  // namespace kvtier
