// The sweep grid (platforms/sweep.h) and the include search order (platforms/platform_config.h).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "platforms/platform_config.h"
#include "platforms/sweep.h"
#include "tests/tlm/sc_test_main.h"

namespace kvtier {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepGrid, ReadsKeysValuesAndLines) {
  const std::string text =
      "include = h200-cxl2-x16\n[hbm]\nkv_budget_gib = 8\n\n[sweep]\n# budget "
      "first\nhbm.kv_budget_gib = 16, 32,64\n"
      "link.lanes=4 , 8   # two widths\n";
  const auto axes = read_sweep_section(text, "f.ini");
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(axes[0].key, "hbm.kv_budget_gib");
  EXPECT_EQ(axes[0].values, (std::vector<std::string>{"16", "32", "64"}));
  EXPECT_EQ(axes[0].where, "f.ini:7");
  EXPECT_EQ(axes[1].values, (std::vector<std::string>{"4", "8"}));
  EXPECT_EQ(axes[1].where, "f.ini:8");
  EXPECT_TRUE(read_sweep_section("[hbm]\nkv_budget_gib = 8\n", "f.ini").empty());
}

TEST(SweepGrid, MalformedLinesNameFileAndLine) {
  EXPECT_NE(error_of([] {
              read_sweep_section("[sweep]\na.b = 1\na.b = 2\n", "f.ini");
            }).find("f.ini:3: [sweep] key 'a.b' is given twice"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              read_sweep_section("[sweep]\na.b = 1,\n", "f.ini");
            }).find("f.ini:2: [sweep] key 'a.b' has an empty value"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              read_sweep_section("[sweep]\na.b =\n", "f.ini");
            }).find("f.ini:2: [sweep] key 'a.b' has no values"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              read_sweep_section("[sweep]\njust words\n", "f.ini");
            }).find("f.ini:2: [sweep] line 'just words'"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { read_sweep_section("[sweep]\n[hbm]\n", "f.ini"); }).find("declares no key"),
      std::string::npos);
}

TEST(SweepGrid, CartesianProductLastKeyFastest) {
  const std::vector<SweepAxis> axes = {
      {"a", {"1", "2", "3"}, "f:1"}, {"b", {"x", "y"}, "f:2"}, {"c", {"p"}, "f:3"}};
  const auto points = expand_sweep(axes, false);
  ASSERT_EQ(points.size(), 6u);  // 3 x 2 x 1
  EXPECT_EQ(points[0], (std::vector<std::string>{"1", "x", "p"}));
  EXPECT_EQ(points[1], (std::vector<std::string>{"1", "y", "p"}));
  EXPECT_EQ(points[2], (std::vector<std::string>{"2", "x", "p"}));
  EXPECT_EQ(points[5], (std::vector<std::string>{"3", "y", "p"}));
}

TEST(SweepGrid, ZipPairsListsOfEqualLength) {
  const std::vector<SweepAxis> axes = {{"a", {"1", "2", "3"}, "f:1"},
                                       {"b", {"x", "y", "z"}, "f:2"}};
  const auto points = expand_sweep(axes, true);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[2], (std::vector<std::string>{"3", "z"}));
  const std::vector<SweepAxis> uneven = {{"a", {"1", "2", "3"}, "f:1"}, {"b", {"x"}, "f:2"}};
  EXPECT_NE(error_of([&] {
              expand_sweep(uneven, true);
            }).find("f:2: --zip pairs the lists, but 'b' has 1 values and 'a' has 3"),
            std::string::npos);
}

TEST(SweepTable, FlattensScalarsInDocumentOrder) {
  const auto j = nlohmann::ordered_json::parse(
      R"({"requests": 12, "ttft_p99_s": 0.25, "wall_time_s": 3.5, "serving": {"kv_load": "async", "preemptions": 0},
          "empty": null, "ok": true, "tenants": [1, 2], "blocks": {"inner": {"deep": 7}}})");
  const auto flat = flatten_scalars(j);
  const std::vector<std::pair<std::string, std::string>> want = {{"requests", "12"},
                                                                 {"ttft_p99_s", "0.25"},
                                                                 {"wall_time_s", "3.5"},
                                                                 {"serving.kv_load", "async"},
                                                                 {"serving.preemptions", "0"},
                                                                 {"empty", ""},
                                                                 {"ok", "true"},
                                                                 {"blocks.inner.deep", "7"}};
  EXPECT_EQ(flat, want);
  EXPECT_TRUE(is_wall_clock_metric("wall_time_s"));
  EXPECT_TRUE(is_wall_clock_metric("bench.sim_s_per_wall_s"));
  EXPECT_FALSE(is_wall_clock_metric("ttft_p99_s"));
}

TEST(SweepTable, CsvFieldsQuoteOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("0.25"), "0.25");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(point_name(7), "0007");
  EXPECT_EQ(point_name(12345), "12345");
}

TEST(SweepSection, PlatformLoaderSkipsItAndKeepsLineNumbers) {
  const PlatformConfig c = load_embedded_platform_text(
      "include = h200-cxl2-x16.ini\n[sweep]\nhbm.kv_budget_gib = 4, 8\n[hbm]\nkv_budget_gib = 6\n",
      "s.ini");
  EXPECT_DOUBLE_EQ(c.hbm.kv_budget_gib, 6.0);  // the base point: the [hbm] value, not a swept one
  const std::string e = error_of([] {
    load_embedded_platform_text(
        "include = h200-cxl2-x16.ini\n[sweep]\nhbm.kv_budget_gib = 4, 8\n[hbm]\nbogus = 1\n",
        "s.ini");
  });
  EXPECT_NE(e.find("s.ini:5: unknown key 'hbm.bogus'"), std::string::npos) << e;
  EXPECT_TRUE(is_platform_key("hbm.kv_budget_gib"));
  EXPECT_FALSE(is_platform_key("hbm.kv_budget_gb"));
}

// Include search order: relative to the file, the installed directory, the embedded set.
class IncludeSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("kvtier_include_search_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "user");
    std::filesystem::create_directories(root_ / "installed" / "links");
  }
  void TearDown() override {
    unsetenv("KVTIER_PLATFORM_DIR");
    std::filesystem::remove_all(root_);
  }
  std::string write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path root_;
};

TEST_F(IncludeSearch, StockPlatformByNameFromTheEmbeddedSet) {
  const auto user =
      write(root_ / "user" / "mine.ini", "include = h200-cxl2-x16\n[hbm]\nkv_budget_gib = 5\n");
  const PlatformConfig mine = load_platform(user);
  const PlatformConfig stock = load_platform("h200-cxl2-x16");
  EXPECT_DOUBLE_EQ(mine.hbm.kv_budget_gib, 5.0);
  EXPECT_EQ(mine.link.protocol, stock.link.protocol);
  EXPECT_EQ(mine.link.lanes, stock.link.lanes);
  EXPECT_DOUBLE_EQ(mine.hbm.capacity_gb, stock.hbm.capacity_gb);
  // Sub-folder paths of the set, with or without the extension.
  const auto parts =
      write(root_ / "user" / "parts.ini", "include = gpus/h200.ini\ninclude = links/cxl2-x16\n");
  const PlatformConfig p = load_platform(parts);
  EXPECT_EQ(p.link.protocol,
            LinkProtocolKind::Cxl2);  // the preset's own protocol (the pair file sets simple)
  EXPECT_EQ(p.link.lanes, 16u);
  EXPECT_DOUBLE_EQ(p.hbm.capacity_gb, stock.hbm.capacity_gb);
}

TEST_F(IncludeSearch, RelativeBeforeInstalledBeforeEmbedded) {
  setenv("KVTIER_PLATFORM_DIR", (root_ / "installed").c_str(), 1);
  write(root_ / "installed" / "links" / "cxl2-x16.ini",
        "include = ../../installed_base.ini\n[link]\nlanes = 2\nprotocol = cxl2\n");
  write(root_ / "installed_base.ini", "[link]\nlatency_ns = 77\n");
  const auto user =
      write(root_ / "user" / "mine.ini", "include = gpus/h200.ini\ninclude = links/cxl2-x16.ini\n");
  PlatformConfig c = load_platform(user);
  EXPECT_EQ(c.link.lanes, 2u);                // the installed file, not the embedded one
  EXPECT_DOUBLE_EQ(c.link.latency_ns, 77.0);  // and its own include, relative to it
  std::filesystem::create_directories(root_ / "user" / "links");
  write(root_ / "user" / "links" / "cxl2-x16.ini", "[link]\nlanes = 4\nprotocol = cxl2\n");
  c = load_platform(user);
  EXPECT_EQ(c.link.lanes, 4u);  // the file beside the user's wins
}

TEST_F(IncludeSearch, ErrorListsWhereItLooked) {
  setenv("KVTIER_PLATFORM_DIR", (root_ / "installed").c_str(), 1);
  const auto user = write(root_ / "user" / "mine.ini", "include = nosuch-platform\n");
  const std::string e = error_of([&] { load_platform(user); });
  EXPECT_NE(e.find(user + ": cannot open included file 'nosuch-platform'; looked in"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find((root_ / "user" / "nosuch-platform.ini").string()), std::string::npos) << e;
  EXPECT_NE(e.find((root_ / "installed" / "nosuch-platform.ini").string()), std::string::npos) << e;
  EXPECT_NE(e.find("the embedded platform set (platforms/nosuch-platform[.ini])"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace kvtier

// The platform library links SystemC, whose main() calls sc_main().
KVTIER_SC_TEST_MAIN()
