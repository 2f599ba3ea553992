// Model descriptors from Hugging Face config.json files: the built-in models' shapes and
// parameter counts by hand, head_dim and GQA, an MoE, and every error naming its field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "workloads/model.h"

using namespace kvtier::workload;

namespace {

// A Llama-3-8B-shaped config with one field changed or removed.
std::string llama8b_with(const std::string& field, const nlohmann::json* value) {
  nlohmann::json j = {{"hidden_size", 4096},        {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},  {"num_key_value_heads", 8},
                      {"intermediate_size", 14336}, {"vocab_size", 128256},
                      {"hidden_act", "silu"},       {"torch_dtype", "bfloat16"}};
  if (value) j[field] = *value;
  else j.erase(field);
  return j.dump();
}

std::string error_of(const std::string& text) {
  try {
    model_from_config_json(text, "cfg.json", "cfg");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ModelConfig, BuiltInModelsAreTheirConfigFiles) {
  const ModelDescriptor& m = model_by_name("llama-3-70b");
  EXPECT_EQ(m.layers, 80u);
  EXPECT_EQ(m.heads, 64u);
  EXPECT_EQ(m.kv_heads, 8u);
  EXPECT_EQ(m.head_dim, 128u);  // 8192 / 64
  EXPECT_EQ(m.hidden, 8192u);
  EXPECT_EQ(m.intermediate, 28672u);
  EXPECT_EQ(m.vocab, 128256u);
  EXPECT_EQ(m.checkpoint_dtype_bytes, 2.0);
  // Per layer: QKV 8192 x 10240 + output 8192 x 8192 + MLP 3 x 8192 x 28672 + 2 norms x 8192 =
  // 855,654,400; x 80 + final norm 8192 + embedding and LM head 2 x 128256 x 8192 = 70,553,706,496
  // (the model card's 70.55e9).
  EXPECT_EQ(m.parameters, 70'553'706'496.0);
  EXPECT_EQ(model_by_name("llama-3-8b").parameters, 8'030'261'248.0);  // the card's 8.03e9
  // Llama-3.1-70B: Llama-3-70B's shapes (the same KV and weights) with a 16x longer window.
  const ModelDescriptor& m31 = model_by_name("llama-3.1-70b");
  EXPECT_EQ(m.max_position_embeddings, 8192u);
  EXPECT_EQ(m31.max_position_embeddings, 131072u);
  EXPECT_EQ(m31.parameters, m.parameters);
  EXPECT_EQ(m31.kv_bytes_per_token(2), m.kv_bytes_per_token(2));
  EXPECT_EQ(model_by_name("llama-2-7b").kv_heads, 32u);  // no GQA
  // The same file from its path in the source tree, and from the embedded set by that path.
  const ModelDescriptor from_file =
      model_from_config_file(std::string(KVTIER_SOURCE_DIR) + "/workloads/models/llama-3-8b.json");
  EXPECT_EQ(from_file.parameters, 8'030'261'248.0);
  EXPECT_EQ(model_from_config_file("workloads/models/llama-2-70b.json").vocab, 32000u);
  EXPECT_THROW(model_from_config_file("no/such/config.json"), std::invalid_argument);
  try {
    model_from_config_file("/");  // a directory, not a config
    FAIL() << "a directory accepted as a model config";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
  }
}

TEST(ModelConfig, HeadDimWhenGivenAndTiedEmbeddings) {
  // A Mistral-Nemo-like shape: head_dim 128 although 5120 / 32 = 160.
  const std::string nemo =
      R"({"hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 32,
      "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336, "vocab_size": 131072,
      "hidden_act": "silu", "tie_word_embeddings": true, "_name_or_path": "nemo"})";
  const ModelDescriptor m = model_from_config_json(nemo, "nemo.json", "x");
  EXPECT_EQ(m.name, "nemo");
  EXPECT_EQ(m.q_dim(), 4096u);
  EXPECT_EQ(m.kv_bytes_per_token(2), 2ull * 40 * 8 * 128 * 2);
  // Attention 5120 x (4096 + 2048) + 4096 x 5120, MLP 3 x 5120 x 14336, norms 2 x 5120; one
  // embedding table (tied).
  const double layer = 5120.0 * 6144 + 4096.0 * 5120 + 3.0 * 5120 * 14336 + 2 * 5120;
  EXPECT_EQ(m.parameters, 40 * layer + 5120 + 5120.0 * 131072);
}

TEST(ModelConfig, MixtralStyleMoeKeepsEveryExpertResident) {
  const std::string mixtral =
      R"({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "hidden_act": "silu",
      "num_local_experts": 8, "num_experts_per_tok": 2, "torch_dtype": "bfloat16"})";
  const ModelDescriptor m = model_from_config_json(mixtral, "mixtral.json", "mixtral");
  EXPECT_TRUE(m.moe());
  EXPECT_EQ(m.experts, 8u);
  EXPECT_EQ(m.experts_per_token, 2u);
  // Per layer: attention 41,943,040 + 8 experts x 176,160,768 + router 4096 x 8 + norms 8192 =
  // 1,451,270,144; x 32 + 4096 + 2 x 32000 x 4096 = 46,702,792,704 (Mixtral-8x7B's 46.7e9).
  EXPECT_EQ(m.parameters, 46'702'792'704.0);
}

TEST(ModelConfig, AMissingFieldIsAnErrorNamingIt) {
  for (const char* field :
       {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
        "intermediate_size", "vocab_size", "hidden_act"}) {
    const std::string e = error_of(llama8b_with(field, nullptr));
    EXPECT_NE(e.find("cfg.json: field '" + std::string(field) + "' is missing"), std::string::npos)
        << e;
  }
  // torch_dtype is the checkpoint's width, informative: it may be absent.
  EXPECT_EQ(error_of(llama8b_with("torch_dtype", nullptr)), "");
}

TEST(ModelConfig, ABadValueIsAnErrorNamingTheField) {
  const nlohmann::json zero = 0, text = "many", half = 2.5, act = "tanh", dtype = "int3", eight = 8,
                       nine = 9;
  EXPECT_NE(error_of(llama8b_with("num_attention_heads", &zero))
                .find("field 'num_attention_heads' = 0 must be a positive whole number"),
            std::string::npos);
  EXPECT_NE(error_of(llama8b_with("hidden_size", &text)).find("field 'hidden_size' = \"many\""),
            std::string::npos);
  EXPECT_NE(
      error_of(llama8b_with("num_hidden_layers", &half)).find("field 'num_hidden_layers' = 2.5"),
      std::string::npos);
  EXPECT_NE(error_of(llama8b_with("hidden_act", &act)).find("field 'hidden_act' = \"tanh\""),
            std::string::npos);
  EXPECT_NE(error_of(llama8b_with("torch_dtype", &dtype)).find("field 'torch_dtype' = \"int3\""),
            std::string::npos);
  EXPECT_NE(error_of(llama8b_with("num_key_value_heads", &nine))
                .find("'num_key_value_heads' = 9 must divide"),
            std::string::npos);
  // 4096 / 24 heads is not whole: head_dim must then be given.
  const nlohmann::json heads24 = 24;
  EXPECT_NE(
      error_of(llama8b_with("num_attention_heads", &heads24)).find("field 'head_dim' is missing"),
      std::string::npos);
  EXPECT_NE(error_of("{not json").find("cfg.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
  // An MoE without its top-k, and top-k without experts.
  nlohmann::json moe = nlohmann::json::parse(llama8b_with("num_local_experts", &eight));
  EXPECT_NE(error_of(moe.dump()).find("field 'num_experts_per_tok' is missing"), std::string::npos);
  EXPECT_NE(error_of(llama8b_with("num_experts_per_tok", &eight))
                .find("neither 'num_local_experts' nor 'num_experts'"),
            std::string::npos);
}

TEST(ModelConfig, FamiliesTheDescriptorCannotRepresentAreRejected) {
  const nlohmann::json rank = 512, step = 2, routed = 64;
  EXPECT_NE(error_of(llama8b_with("kv_lora_rank", &rank)).find("multi-head latent attention"),
            std::string::npos);
  EXPECT_NE(error_of(llama8b_with("n_routed_experts", &routed)).find("DeepSeek-style MoE"),
            std::string::npos);
  EXPECT_NE(
      error_of(llama8b_with("decoder_sparse_step", &step)).find("mixing dense and MoE layers"),
      std::string::npos);
}
