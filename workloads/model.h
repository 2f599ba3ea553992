#pragma once
// Transformer model descriptors: the shapes that decide KV bytes per token, weight bytes and the
// GEMM shapes of every operator. A descriptor is read from a Hugging Face config.json (dense
// Llama-family decoders: Llama, Mistral, Qwen2, InternLM2, and Mixtral-style MoE); the built-in
// models are such files in workloads/models/, embedded in the binary.
#include <cstdint>
#include <string>
#include <vector>

namespace kvtier::workload {

struct ModelDescriptor {
  std::string name;
  uint32_t layers = 0;        // num_hidden_layers
  uint32_t heads = 0;         // num_attention_heads (query heads)
  uint32_t kv_heads = 0;      // num_key_value_heads (GQA key/value heads)
  uint32_t head_dim = 0;      // head_dim, or hidden_size / num_attention_heads
  uint32_t hidden = 0;        // hidden_size: model width
  uint32_t intermediate = 0;  // intermediate_size: gated MLP width (of one expert for MoE)
  uint32_t vocab = 0;         // vocab_size: LM head width
  uint32_t max_position_embeddings = 0;  // the context window (prompt + output); 0: not given
  bool tied_embeddings = false;  // tie_word_embeddings: the LM head shares the embedding table
  // Mixture of experts (num_local_experts or num_experts, num_experts_per_tok): every expert is
  // resident, a token runs through experts_per_token of them. 0 experts: a dense MLP.
  uint32_t experts = 0;
  uint32_t experts_per_token = 0;
  uint32_t shared_expert_intermediate = 0;  // shared_expert_intermediate_size (Qwen2-MoE), 0: none
  std::string hidden_act;               // the MLP's activation (every family read here gates it)
  double checkpoint_dtype_bytes = 0.0;  // torch_dtype of the checkpoint (0: not given)
  double parameters = 0.0;              // total parameter count, computed from the shapes
  std::string source;                   // where the shape comes from

  uint64_t q_dim() const { return static_cast<uint64_t>(heads) * head_dim; }
  uint64_t kv_dim() const { return static_cast<uint64_t>(kv_heads) * head_dim; }
  bool moe() const { return experts > 0; }
  // K and V, every layer, every KV head: 2 x L x H_kv x d x bytes.
  uint64_t kv_bytes_per_token(uint32_t kv_dtype_bytes) const {
    return 2ull * layers * kv_heads * head_dim * kv_dtype_bytes;
  }
  double weight_bytes(double weight_dtype_bytes) const { return parameters * weight_dtype_bytes; }
  // Parameters of one layer's attention (QKV + output projection) and of one expert's MLP.
  double attention_parameters() const;
  double expert_mlp_parameters() const { return 3.0 * hidden * intermediate; }
};

// Reads a Hugging Face config.json. `where` names the file in errors. Throws std::invalid_argument
// naming the file and the field for a missing or bad field, and for a model family this
// descriptor cannot represent (MLA attention, interleaved dense/MoE layers).
ModelDescriptor model_from_config_json(const std::string& json_text, const std::string& where,
                                       const std::string& default_name);
// The same from a file on disk, or from the built-in set: `workloads/models/NAME.json` or
// NAME.json.
ModelDescriptor model_from_config_file(const std::string& path);

// Built-in models (workloads/models/*.json); throws std::invalid_argument naming the known ones.
const ModelDescriptor& model_by_name(const std::string& name);
std::vector<std::string> known_models();

}  // namespace kvtier::workload
