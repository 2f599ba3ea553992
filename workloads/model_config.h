#pragma once
// The [model] section: which model is served, its data types and tensor parallelism. The
// shapes themselves come from workloads/model.h (model.name or model.config).
#include <cstdint>
#include <string>

namespace kvtier {

class KeyRegistry;

struct ModelConfig {
  std::string name = "llama-3.1-70b";
  double weight_dtype_bytes = 1.0;  // FP8 weights
  uint32_t kv_dtype_bytes = 2;      // bf16 KV
  // A replica spanning N GPUs (tensor parallel): weights and KV heads split evenly. The platform
  // simulates ONE GPU of the replica: W/N weights, KV/N bytes per token, its own HBM and link.
  uint32_t tensor_parallel = 1;
  // A Hugging Face config.json giving the shapes (workloads/model.h); empty: the built-in `name`.
  std::string config;
};

// Declares every [model] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, ModelConfig& c);

}  // namespace kvtier
