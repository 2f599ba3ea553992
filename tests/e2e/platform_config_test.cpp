// Platform files: every configuration error names the file, the line or key, and the range.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <algorithm>

#include <unistd.h>

#include "platforms/platform.h"
#include "platforms/key_modes.h"
#include "platforms/progress.h"
#include "platforms/platform_config.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    load_platform_text(text, "test.ini", ".", overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PlatformConfig, TheEmbeddedDefaultLoadsAndIsTheDocumentedPlatform) {
  const PlatformConfig c = load_platform("");
  EXPECT_EQ(c.model.name, "llama-3.1-70b");
  EXPECT_EQ(c.model_shape.max_position_embeddings,
            131072u);  // the served window: Llama-3.1's config.json
  EXPECT_EQ(effective_max_model_len(c), 131072u);
  EXPECT_EQ(c.sim.max_sim_s, 604800.0);
  EXPECT_EQ(c.hbm.capacity_gb, 141);
  EXPECT_EQ(c.hbm.kv_budget_gib, 32);
  EXPECT_EQ(c.tier.capacity_gib, 256);
  EXPECT_EQ(c.link.lanes, 16u);
}

TEST(PlatformConfig, MaxModelLenLowersTheModelsWindowAndZeroMeansTheModels) {
  EXPECT_EQ(effective_max_model_len(load_platform("", {"sched.max_model_len=4096"})), 4096u);
  EXPECT_EQ(effective_max_model_len(load_platform("", {"model.name=llama-3-70b"})), 8192u);
  EXPECT_EQ(effective_max_model_len(
                load_platform("", {"model.name=llama-3-70b", "sched.max_model_len=32768"})),
            32768u);
}

TEST(PlatformConfig, UnknownKeyNamesFileLineAndKey) {
  const std::string e = error_of("[hbm]\ncapacity_gb = 141\nbandwidth = 5\n");
  EXPECT_NE(e.find("test.ini:3"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'hbm.bandwidth'"), std::string::npos) << e;
}

TEST(PlatformConfig, UnknownSectionIsAnUnknownKey) {
  const std::string e = error_of("[gpu]\ncapacity_gb = 141\n");
  EXPECT_NE(e.find("unknown key 'gpu.capacity_gb'"), std::string::npos) << e;
}

TEST(PlatformConfig, OutOfRangeNamesKeyValueAndRange) {
  const std::string e = error_of("[hbm]\neta_kv = 1.5\n");
  EXPECT_NE(e.find("test.ini:2"), std::string::npos) << e;
  EXPECT_NE(e.find("'hbm.eta_kv' = 1.5"), std::string::npos) << e;
  EXPECT_NE(e.find("[0.01, 1]"), std::string::npos) << e;
}

TEST(PlatformConfig, NonNumbersAndFractionsOfCountsAreRejected) {
  EXPECT_NE(error_of("[hbm]\npeak_bw_gbps = fast\n").find("not a number"), std::string::npos);
  EXPECT_NE(error_of("[ctrl]\nindex_ways = 2.5\n").find("whole number"), std::string::npos);
  EXPECT_NE(error_of("[host]\npolicy = random\n").find("'host.policy' = 'random' is not one of"),
            std::string::npos);
}

// host.ema_clock is held as an enum: both words read back, through the file and --set, and a word
// outside its table names the file, line and key, with the words allowed.
TEST(PlatformConfig, EmaClockWordsReadBackAndUnknownWordsNameTheKey) {
  EXPECT_EQ(load_platform_text("[host]\nema_clock = reference\n", "test.ini", ".").host.ema_clock,
            EmaClock::Reference);
  EXPECT_EQ(load_platform("", {"host.ema_clock=second"}).host.ema_clock, EmaClock::Second);
  EXPECT_EQ(load_platform("").host.ema_clock, EmaClock::Second);
  EXPECT_STREQ(name_of(EmaClock::Reference), "reference");
  EXPECT_EQ(error_of("[host]\npolicy = ema\nema_clock = minute\n"),
            "test.ini:3: key 'host.ema_clock' = 'minute' is not one of second reference");
  EXPECT_EQ(error_of("", {"host.ema_clock=hour"}),
            "--set: key 'host.ema_clock' = 'hour' is not one of second reference");
}

TEST(PlatformConfig, SetOverridesWinAndUnknownSetKeysFail) {
  const PlatformConfig c =
      load_platform("", {"hbm.kv_budget_gib=16", "hbm.eta_kv=0.3", "hbm.kv_budget_gib=20"});
  EXPECT_EQ(c.hbm.kv_budget_gib, 20);  // the last --set of a key wins
  EXPECT_EQ(c.hbm.eta_kv, 0.3);
  EXPECT_NE(error_of("", {"hbm.nope=1"}).find("--set 'hbm.nope=1': unknown key 'hbm.nope'"),
            std::string::npos);
  EXPECT_NE(error_of("", {"hbm.eta_kv=0"}).find("--set: key 'hbm.eta_kv' = 0"), std::string::npos);
  EXPECT_NE(error_of("", {"no_equals"}).find("expected section.key=value"), std::string::npos);
}

TEST(PlatformConfig, Llama70bInBf16DoesNotFitAnH100) {
  // 70.55e9 parameters x 2 B = 141.1 GB of weights alone exceed 80 GB.
  const std::string e =
      error_of("[model]\nweight_dtype_bytes = 2\n[hbm]\ncapacity_gb = 80\npeak_bw_gbps = 3350\n");
  EXPECT_NE(e.find("weights 141.1 GB"), std::string::npos) << e;
  EXPECT_NE(e.find("exceed hbm.capacity_gb = 80.0 GB"), std::string::npos) << e;
}

TEST(PlatformConfig, CrossFieldChecks) {
  EXPECT_NE(error_of("[ctrl]\nindex_sets = 1000\n").find("power of two"), std::string::npos);
  EXPECT_NE(error_of("[host]\nlayers_per_block = 3\n").find("must divide the model's 80 layers"),
            std::string::npos);
  EXPECT_NE(error_of("[ctrl]\ntier_addr_bits = 10\n").find("ctrl.tier_addr_bits = 10"),
            std::string::npos);
}

// host.persistent_policy: the flag's old spellings, and device persistence only where the
// device keeps the word it persists in.
TEST(PlatformConfig, PolicyPersistenceKeepsTheFlagsSpellingsAndNeedsTheDevicesWord) {
  EXPECT_EQ(load_platform("", {"host.persistent_policy=true"}).host.persistent_policy,
            PolicyPersistence::Host);
  EXPECT_EQ(load_platform("", {"host.persistent_policy=0"}).host.persistent_policy,
            PolicyPersistence::None);
  EXPECT_EQ(load_platform("", {"host.persistent_policy=device"}).host.persistent_policy,
            PolicyPersistence::Device);
  const std::string host_dma = error_of("[host]\npersistent_policy = device\ndma = host\n");
  EXPECT_NE(host_dma.find("'host.persistent_policy' = device"), std::string::npos) << host_dma;
  EXPECT_NE(host_dma.find("host.dma = device (now host)"), std::string::npos) << host_dma;
  const std::string narrow =
      error_of("[host]\npersistent_policy = device\n[ctrl]\npolicy_bits = 4\n");
  EXPECT_NE(narrow.find("ctrl.policy_bits >= 8 (now 4)"), std::string::npos) << narrow;
  EXPECT_NE(error_of("[host]\npersistent_policy = maybe\n").find("one of false true device"),
            std::string::npos);
}

// host.layer_groups splits any model's layers into N groups: Llama-3-70B's 80 into 4 x 20 (blocks
// of 16 x 20 x 4 KiB = 1.25 MiB), Llama-3-8B's 32 into 4 x 8; it must divide the layers, and it
// and host.layers_per_block cannot both be set.
TEST(PlatformConfig, LayerGroupsSplitAnyModelsLayers) {
  const PlatformConfig big = load_platform("", {"host.layer_groups=4"});
  EXPECT_EQ(layers_per_block(big), 20u);
  EXPECT_EQ(layer_groups(big, big.model_shape), 4u);
  EXPECT_EQ(block_bytes(big, big.model_shape), 16u * 20 * 4096);
  const PlatformConfig small = load_platform("", {"host.layer_groups=4", "model.name=llama-3-8b"});
  EXPECT_EQ(small.model_shape.layers, 32u);
  EXPECT_EQ(layers_per_block(small), 8u);
  EXPECT_EQ(layer_groups(small, small.model_shape), 4u);
  EXPECT_EQ(layers_per_block(load_platform("")), 20u);  // the default platform's four groups
  // The two keys are one setting: the source that takes precedence wins, as for any key. --set
  // wins over the default platform's host.layer_groups = 4 ...
  EXPECT_EQ(layers_per_block(load_platform("", {"host.layers_per_block=10"})), 10u);
  EXPECT_EQ(layers_per_block(
                load_platform("", {"host.layers_per_block=0", "host.decode_residency=pinned"})),
            80u);  // all layers in one block (which streamed residency refuses)
  // ... the pinned preset's host.layers_per_block = 0 wins over the layer_groups it includes ...
  EXPECT_EQ(layers_per_block(load_platform("h200-cxl2-x16-pinned", {})), 80u);
  // ... and --set host.layer_groups over the preset's host.layers_per_block.
  EXPECT_EQ(layers_per_block(load_platform("h200-cxl2-x16-pinned", {"host.layer_groups=8"})), 10u);
  // Both non-zero in one source is an error, in a file as on the command line.
  EXPECT_NE(error_of("include = h200-cxl2-x16\n[host]\nlayer_groups = 4\nlayers_per_block = 20\n")
                .find("both set the block's layers in one source"),
            std::string::npos);
  EXPECT_NE(error_of("", {"host.layer_groups=3"})
                .find("key 'host.layer_groups' = 3 must divide the model's 80 layers"),
            std::string::npos);
  EXPECT_NE(error_of("", {"host.layer_groups=4", "host.layers_per_block=20"})
                .find("both set the block's layers"),
            std::string::npos);
  EXPECT_NE(error_of("", {"host.layer_groups=2", "host.decode_residency=streamed"})
                .find("at least 3 layer groups"),
            std::string::npos);
  // The streamed preset names groups, not layers: it runs any model whose layers 4 divides.
  const PlatformConfig preset =
      load_platform("h200-cxl2-x16-streamed.ini", {"model.name=llama-3-8b"});
  EXPECT_EQ(layers_per_block(preset), 8u);
}

TEST(PlatformConfig, IncludesComposeAndTheIncludingFileWins) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kvtier_include_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "link.ini") << "[link]\nlanes = 8\nlatency_ns = 90\n";
  std::ofstream(dir / "gpu.ini") << "include = link.ini\n[link]\nlatency_ns = 70\n";
  const PlatformConfig c = load_platform((dir / "gpu.ini").string());
  EXPECT_EQ(c.link.lanes, 8u);       // from the included file
  EXPECT_EQ(c.link.latency_ns, 70);  // the including file wins
  std::ofstream(dir / "bad.ini") << "include = missing.ini\n";
  try {
    load_platform((dir / "bad.ini").string());
    FAIL() << "missing include accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open included file"), std::string::npos);
  }
  std::ofstream(dir / "typo.ini") << "include = link.ini\n[link]\nlane = 4\n";
  try {
    load_platform((dir / "typo.ini").string());
    FAIL() << "unknown key accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("typo.ini:3: unknown key 'link.lane'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(load_platform((dir / "absent.ini").string()), ConfigError);
}

// Every key the mode table names is a declared key (a misspelt entry would never warn), and
// config --help shows the mode beside each.
TEST(KeyModes, EveryKeyWithAModeIsDeclaredAndItsModeIsListed) {
  const std::string listing = describe_keys();
  const std::vector<std::string> keys = keys_with_modes();
  EXPECT_GT(keys.size(), 60u);
  for (const std::string& k : keys) {
    const size_t at = listing.find("  " + k + " ");
    ASSERT_NE(at, std::string::npos) << k << " is not a declared key";
    const std::string line = listing.substr(at, listing.find('\n', at) - at);
    EXPECT_NE(line.find("[read only when " + key_read_when(k) + "]"), std::string::npos) << line;
  }
  EXPECT_EQ(key_read_when("hbm.kv_budget_gib"), "");  // read by every run
}

// Each family's verdict goes one way, then the other, on hand-set configurations.
TEST(KeyModes, AKeySetForAnotherModeIsNamedWithTheModeInForce) {
  PlatformConfig c =
      load_platform("");  // the default: operators, streamed, lru, idle ends, cxl2, full index
  auto warned = [&](const std::string& key, const std::string& spec = "synthetic:") {
    const auto w = unread_key_warnings(c, spec, {key});
    return w.empty() ? std::string() : w.front();
  };
  EXPECT_EQ(warned("sched.prefill_tflops"),
            "sched.prefill_tflops is not read: it is read only when sched.cost_model = "
            "two_bandwidth; here "
            "sched.cost_model = operators");
  EXPECT_EQ(warned("gpu.tflops_bf16"), "");
  EXPECT_NE(warned("link.txn_overhead_bytes").find("here link.protocol = cxl2"), std::string::npos);
  EXPECT_EQ(warned("link.credits_posted"), "");
  EXPECT_NE(warned("ctrl.index_cache_entries").find("ctrl.index_org = full"), std::string::npos);
  EXPECT_NE(warned("host.ema_alpha").find("here host.policy = lru"), std::string::npos);
  EXPECT_EQ(warned("host.session_idle_s"), "");  // idle ends with dead blocks freed: read
  EXPECT_EQ(warned("sched.stream_share"), "");
  EXPECT_NE(warned("link.credits_m2s_req").find("CXL.mem"), std::string::npos);
  EXPECT_EQ(warned("workload.sessions"), "");
  EXPECT_NE(warned("workload.sessions", "mooncake:x.jsonl").find("here the workload is mooncake:"),
            std::string::npos);
  EXPECT_EQ(warned("hbm.kv_budget_gib"), "");
  // The other way.
  c.sched.cost_model = CostModel::TwoBandwidth;
  c.link.protocol = LinkProtocolKind::Simple;
  c.ctrl.index_org = IndexOrg::Cached;
  c.host.policy = "ema";
  c.host.session_end = SessionEnd::LastTurn;
  c.host.decode_residency = DecodeResidency::Pinned;
  EXPECT_EQ(warned("sched.prefill_tflops"), "");
  EXPECT_NE(warned("gpu.tflops_bf16").find("here sched.cost_model = two_bandwidth"),
            std::string::npos);
  EXPECT_EQ(warned("link.txn_overhead_bytes"), "");
  EXPECT_NE(warned("link.credits_posted").find("here link.protocol = simple"), std::string::npos);
  EXPECT_EQ(warned("ctrl.index_cache_entries"), "");
  EXPECT_EQ(warned("host.ema_alpha"), "");
  EXPECT_NE(warned("host.session_idle_s").find("here host.session_end = last_turn"),
            std::string::npos);
  EXPECT_NE(warned("sched.stream_share").find("here host.decode_residency = pinned"),
            std::string::npos);
  // --set arguments give their keys once each, spaces dropped.
  EXPECT_EQ(keys_of_overrides({" hbm.kv_budget_gib = 2", "host.policy=ema", "host.policy=lru"}),
            (std::vector<std::string>{"hbm.kv_budget_gib", "host.policy"}));
}

// The progress line: the estimate scales the wall time by the requests left over those settled.
TEST(Progress, LineAndEstimate) {
  std::ostringstream out;
  ProgressReporter p(out, false, 0.0);
  p.begin(60.0, 209);
  EXPECT_EQ(p.line(12.34, 40, 3.1),
            "sim 12.3 s (last arrival 60.0 s) | 40/209 requests | wall 3.1 s | ETA 13 s");
  EXPECT_EQ(p.line(0.5, 0, 0.2),
            "sim 0.5 s (last arrival 60.0 s) | 0/209 requests | wall 0.2 s | ETA n/a");
  EXPECT_EQ(p.line(80.0, 209, 9.0),
            "sim 80.0 s (last arrival 60.0 s) | 209/209 requests | wall 9.0 s | ETA 0 s");
  // Not a terminal: whole lines, nothing to clear at the end.
  p.update(1.0, 10);
  p.update(2.0, 20);
  p.end();
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(text.rfind("kvtier: sim 1.0 s", 0), 0u);
  // A terminal: one line redrawn in place, cleared at the end.
  std::ostringstream tty;
  ProgressReporter q(tty, true, 0.0);
  q.begin(60.0, 209);
  q.update(1.0, 10);
  q.end();
  EXPECT_EQ(tty.str().front(), '\r');
  EXPECT_EQ(tty.str().find('\n'), std::string::npos);
  // Rate limited: a second update within the interval prints nothing.
  std::ostringstream slow;
  ProgressReporter r(slow, false, 3600.0);
  r.begin(60.0, 209);
  r.update(1.0, 10);
  EXPECT_TRUE(slow.str().empty());
}

// The platform library links SystemC, whose main() calls sc_main().
KVTIER_SC_TEST_MAIN()
