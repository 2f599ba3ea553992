#pragma once
// Transformer model descriptors: the shapes that decide KV bytes per token and weight bytes.
#include <cstdint>
#include <string>
#include <vector>

namespace kvtier::workload {

struct ModelDescriptor {
  std::string name;
  uint32_t layers = 0;
  uint32_t kv_heads = 0;       // GQA key/value heads
  uint32_t head_dim = 0;
  uint32_t hidden = 0;         // model width, for prefill FLOPs of attention
  double parameters = 0.0;     // total parameter count
  std::string source;          // where the shape comes from

  // K and V, every layer, every KV head: 2 x L x H_kv x d x bytes.
  uint64_t kv_bytes_per_token(uint32_t kv_dtype_bytes) const {
    return 2ull * layers * kv_heads * head_dim * kv_dtype_bytes;
  }
  double weight_bytes(double weight_dtype_bytes) const { return parameters * weight_dtype_bytes; }
};

// Known models; throws std::invalid_argument naming the known ones for anything else.
const ModelDescriptor& model_by_name(const std::string& name);
std::vector<std::string> known_models();

}  // namespace kvtier::workload
