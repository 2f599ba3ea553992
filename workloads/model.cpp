#include "workloads/model.h"

#include <stdexcept>

namespace kvtier::workload {
namespace {
// Shapes from the models' published Hugging Face config.json files (num_hidden_layers,
// num_key_value_heads, head_dim = hidden_size / num_attention_heads, hidden_size); parameter
// counts from the model cards. KV per token in bf16: 70B 327,680 B = 320 KiB, 8B 131,072 B =
// 128 KiB (CALIBRATION.md §5, class D).
const std::vector<ModelDescriptor>& table() {
  static const std::vector<ModelDescriptor> models = {
      {"llama-3-70b", 80, 8, 128, 8192, 70.55e9, "meta-llama/Meta-Llama-3-70B config.json and model card"},
      {"llama-3-8b", 32, 8, 128, 4096, 8.03e9, "meta-llama/Meta-Llama-3-8B config.json and model card"},
  };
  return models;
}
}  // namespace

const ModelDescriptor& model_by_name(const std::string& name) {
  for (const auto& m : table())
    if (m.name == name) return m;
  std::string known;
  for (const auto& m : table()) known += (known.empty() ? "" : ", ") + m.name;
  throw std::invalid_argument("unknown model '" + name + "' (known: " + known + ")");
}

std::vector<std::string> known_models() {
  std::vector<std::string> names;
  for (const auto& m : table()) names.push_back(m.name);
  return names;
}

}  // namespace kvtier::workload
