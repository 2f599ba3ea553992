// kvtier experiment c1|c2|c3|c4: the falsifiable claims of spec §M.3.2 as commands. Each
// experiment is a set of simulations that differ in one platform choice; it prints the
// measurement that would support its claim beside the one that would refute it, and which of
// the two this workload shows.
//
// SystemC elaborates once per process, so every simulation runs in a process of its own: this
// command re-executes its own binary (/proc/self/exe) as `kvtier run --out DIR` and reads
// DIR/stats.json. Children run in a fixed order of configurations, so the same inputs give the
// same table whatever --jobs is.
#include <algorithm>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "platforms/cli_common.h"
#include "platforms/commands/commands.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace kvtier {
namespace {

const char* const kDefaultTrace = KVTIER_SOURCE_DIR "/workloads/traces/mooncake/conversation_trace_head1000.jsonl";

struct Options {
  std::string experiment;
  std::string platform;
  std::string workload;
  std::vector<std::string> overrides;
  uint64_t seed = 1;
  std::string json;
  std::string keep;
  unsigned jobs = 1;
  std::string loads = "1";            // c1: rate_scale values
  std::string index_sizes = "";       // c2: entries of the SRAM (full: sets x ways; cached: cache entries)
  std::string tenant_counts = "1,4,16,64";
  std::string budgets = "8,16,32,64";
  double material = 0.01;             // c2: lookup share that counts as on the critical path
  double core_share = 0.10;           // c3: share of one core that makes KV movement a CPU cost
  double stall_difference = 0.05;     // c1: relative exposed-stall difference that counts
};

// One simulation: a label, the overrides that define it, and its stats once run.
struct Run {
  std::string label;
  std::vector<std::string> sets;
  std::string workload;
  nlohmann::json stats;
  std::vector<std::string> argv;
};

std::vector<std::string> split_list(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw std::invalid_argument("--" + option + " '" + text + "': empty element");
    out.push_back(item);
  }
  if (out.empty()) throw std::invalid_argument("--" + option + " is empty");
  return out;
}

double positive_number(const std::string& text, const std::string& option) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v > 0) || !std::isfinite(v))
    throw std::invalid_argument("--" + option + ": '" + text + "' is not a positive number");
  return v;
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this executable through /proc/self/exe: " + ec.message());
  return p.string();
}

std::string tail_of(const fs::path& file, size_t max_chars = 2000) {
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  return s.size() > max_chars ? "..." + s.substr(s.size() - max_chars) : s;
}

// Runs every simulation, at most `jobs` at a time, each in its own process.
void run_all(std::vector<Run>& runs, const Options& o, const fs::path& work) {
  const std::string exe = self_exe();
  for (size_t i = 0; i < runs.size(); ++i) {
    Run& r = runs[i];
    const fs::path dir = work / ("run" + std::to_string(i));
    fs::create_directories(dir);
    r.argv = {exe, "run"};
    if (!o.platform.empty()) r.argv.insert(r.argv.end(), {"--platform", o.platform});
    r.argv.insert(r.argv.end(), {"--workload", r.workload, "--seed", std::to_string(o.seed)});
    for (const std::string& s : o.overrides) r.argv.insert(r.argv.end(), {"--set", s});
    for (const std::string& s : r.sets) r.argv.insert(r.argv.end(), {"--set", s});
    r.argv.insert(r.argv.end(), {"--out", dir.string()});
  }
  std::map<pid_t, size_t> running;
  size_t next = 0;
  std::string failure;
  auto reap_one = [&]() {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    const size_t i = running.at(pid);
    running.erase(pid);
    const fs::path dir = work / ("run" + std::to_string(i));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      if (failure.empty())
        failure = "simulation '" + runs[i].label + "' failed (exit " +
                  std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): " + tail_of(dir / "stderr.txt");
      return;
    }
    std::ifstream f(dir / "stats.json");
    if (!f) {
      if (failure.empty()) failure = "simulation '" + runs[i].label + "' wrote no stats.json";
      return;
    }
    runs[i].stats = nlohmann::json::parse(f);
  };
  while (next < runs.size() || !running.empty()) {
    while (failure.empty() && next < runs.size() && running.size() < std::max(1u, o.jobs)) {
      const size_t i = next++;
      const fs::path dir = work / ("run" + std::to_string(i));
      std::cerr << "  [" << i + 1 << "/" << runs.size() << "] " << runs[i].label << "\n";
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        const int out = open((dir / "stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open((dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0) _exit(127);
        dup2(out, 1);
        dup2(err, 2);
        std::vector<char*> args;
        for (const std::string& a : runs[i].argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execv(args[0], args.data());
        _exit(127);
      }
      running[pid] = i;
    }
    if (running.empty()) break;
    reap_one();
  }
  if (!failure.empty()) throw std::runtime_error(failure);
}

std::string quote_command(const std::vector<std::string>& argv) {
  std::string s = "kvtier";
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--out") break;
    const bool plain = argv[i].find_first_of(" ,;'\"$") == std::string::npos;
    s += " " + (plain ? argv[i] : "'" + argv[i] + "'");
  }
  return s;
}

double num(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return 0.0;
  return j[key].get<double>();
}

// A printed table: column titles, then rows of already formatted cells.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> cells;
  void print(std::ostream& os) const {
    std::vector<size_t> width(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      width[c] = columns[c].size();
      for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
    }
    for (size_t c = 0; c < columns.size(); ++c) os << (c ? "  " : "") << std::setw(static_cast<int>(width[c])) << columns[c];
    os << "\n";
    for (const auto& row : cells) {
      for (size_t c = 0; c < row.size(); ++c) os << (c ? "  " : "") << std::setw(static_cast<int>(width[c])) << row[c];
      os << "\n";
    }
  }
};

std::string fmt(double v, int precision = 4) {
  std::ostringstream os;
  os << std::setprecision(precision) << v;
  return os.str();
}

struct Outcome {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  Table table;
  std::string claim;
  std::string support_measurement, refute_measurement;
  bool supported = false;
  std::string verdict;
  nlohmann::ordered_json extra;
};

std::string with_option(const std::string& workload, const std::string& option) {
  if (workload.rfind("synthetic:", 0) == 0)
    throw std::invalid_argument("this sweep sets the trace option '" + option +
                                "', which a synthetic workload does not take: use a trace (mooncake:FILE, ...)");
  return workload + "," + option;
}

// ---------------------------------------------------------------------------------------------
// C1: device-side scheduling vs host-issued DMA, promotion latency and exposed stall under load.
Outcome c1(const Options& o, const fs::path& work) {
  std::vector<Run> runs;
  const auto loads = split_list(o.loads, "loads");
  for (const std::string& load : loads) {
    positive_number(load, "loads");
    const std::string w = load == "1" ? o.workload : with_option(o.workload, "rate_scale=" + load);
    // Layerwise loading: a promotion joins the step that reads it, so the host path's extra
    // latency shows as exposed stall, the quantity C1 is judged by (with the default async
    // loading it would show only in the loading requests' own waits).
    // host.session_end = last_turn unless --set names it: C1 compares the two DMA paths on the
    // same traffic. With the server-side idle session end the two paths move different blocks
    // (docs/experiments.md, C1), so the comparison the claim needs does not hold.
    const bool session_end_set = std::any_of(o.overrides.begin(), o.overrides.end(), [](const std::string& s) {
      return s.rfind("host.session_end=", 0) == 0;
    });
    for (const char* dma : {"device", "host"}) {
      std::vector<std::string> sets = {std::string("host.dma=") + dma, "sched.kv_load=layerwise"};
      if (!session_end_set) sets.push_back("host.session_end=last_turn");
      runs.push_back({std::string("dma=") + dma + " load=" + load, sets, w, {}, {}});
    }
  }
  run_all(runs, o, work);
  Outcome out;
  out.claim = "C1. Device-local decisions remove host round-trips from the promotion path";
  out.table.columns = {"dma", "load", "promotions", "p50_ms", "p99_ms", "queue_ms", "transfer_ms", "stall/token_ms",
                       "stall_total_s", "late_transfers"};
  bool all_support = true;
  std::ostringstream support, refute;
  for (size_t i = 0; i < runs.size(); i += 2) {
    const nlohmann::json& dev = runs[i].stats;
    const nlohmann::json& host = runs[i + 1].stats;
    for (size_t k = 0; k < 2; ++k) {
      const Run& r = runs[i + k];
      const nlohmann::json& s = r.stats;
      const std::string dma = k ? "host" : "device";
      const std::string load = loads[i / 2];
      out.rows.push_back({{"dma", dma},
                          {"load", positive_number(load, "loads")},
                          {"promotions", s["promotions"]},
                          {"promotion_latency_p50_s", num(s, "promotion_latency_p50_s")},
                          {"promotion_latency_p99_s", num(s, "promotion_latency_p99_s")},
                          {"promotion_latency_queue_s", num(s, "promotion_latency_queue_s")},
                          {"promotion_latency_lookup_s", num(s, "promotion_latency_lookup_s")},
                          {"promotion_latency_transfer_s", num(s, "promotion_latency_transfer_s")},
                          {"exposed_stall_per_token_s", num(s, "exposed_stall_per_token_s")},
                          {"exposed_stall_total_s", num(s, "exposed_stall_total_s")},
                          {"hiding_missed", s["constraints"]["hiding"]["missed"]},
                          {"hiding_transfers", s["constraints"]["hiding"]["transfers"]},
                          {"ttft_p99_s", num(s, "ttft_p99_s")},
                          {"command", quote_command(r.argv)}});
      out.table.cells.push_back({dma, load, std::to_string(s["promotions"].get<uint64_t>()),
                                 fmt(num(s, "promotion_latency_p50_s") * 1e3), fmt(num(s, "promotion_latency_p99_s") * 1e3),
                                 fmt(num(s, "promotion_latency_queue_s") * 1e3),
                                 fmt(num(s, "promotion_latency_transfer_s") * 1e3),
                                 fmt(num(s, "exposed_stall_per_token_s") * 1e3), fmt(num(s, "exposed_stall_total_s")),
                                 std::to_string(s["constraints"]["hiding"]["missed"].get<uint64_t>()) + "/" +
                                     std::to_string(s["constraints"]["hiding"]["transfers"].get<uint64_t>())});
    }
    const double dev_stall = num(dev, "exposed_stall_per_token_s"), host_stall = num(host, "exposed_stall_per_token_s");
    const double diff = host_stall > 0 ? (host_stall - dev_stall) / host_stall : 0.0;
    const bool lower_latency = num(dev, "promotion_latency_p99_s") < num(host, "promotion_latency_p99_s");
    all_support &= lower_latency && diff > o.stall_difference;
    support << "  load " << loads[i / 2] << ": promotion latency p50/p99 device " << fmt(num(dev, "promotion_latency_p50_s") * 1e3)
            << "/" << fmt(num(dev, "promotion_latency_p99_s") * 1e3) << " ms vs host-issued "
            << fmt(num(host, "promotion_latency_p50_s") * 1e3) << "/" << fmt(num(host, "promotion_latency_p99_s") * 1e3)
            << " ms\n";
    refute << "  load " << loads[i / 2] << ": exposed stall per token device " << fmt(dev_stall * 1e3) << " ms vs host-issued "
           << fmt(host_stall * 1e3) << " ms (host path's stall is " << fmt(diff * 100, 3)
           << "% above the device path's; below " << fmt(o.stall_difference * 100, 3) << "% counts as no difference)\n";
  }
  out.support_measurement = support.str();
  out.refute_measurement = refute.str();
  out.supported = all_support;
  out.verdict = all_support ? "supported: device-side scheduling gives lower p99 promotion latency and materially less "
                              "exposed stall at every load"
                            : "refuted on this workload: at some load the host-issued path's extra latency does not show "
                              "as materially more exposed stall (or its latency is not higher)";
  return out;
}

// ---------------------------------------------------------------------------------------------
// C2: share of promotion latency in the index lookup, full SRAM index vs cached index.
Outcome c2(const Options& o, const fs::path& work) {
  std::vector<Run> runs;
  const std::string sizes_text = o.index_sizes.empty() ? "1024,4096,16384,65536" : o.index_sizes;
  const auto sizes = split_list(sizes_text, "index-sizes");
  for (const std::string& size : sizes) {
    const double entries = positive_number(size, "index-sizes");
    const uint64_t n = static_cast<uint64_t>(entries);
    if (n < 4 || (n & (n - 1)) || static_cast<double>(n) != entries)
      throw std::invalid_argument("--index-sizes: " + size + " is not a power of two >= 4 (sets x 4 ways)");
    runs.push_back({"full index, " + size + " entries",
                    {"ctrl.index_org=full", "ctrl.index_ways=4", "ctrl.index_sets=" + std::to_string(n / 4)},
                    o.workload, {}, {}});
    runs.push_back({"cached index, " + size + " SRAM entries",
                    {"ctrl.index_org=cached", "ctrl.index_cache_entries=" + size}, o.workload, {}, {}});
  }
  run_all(runs, o, work);
  Outcome out;
  out.claim = "C2. Metadata lookup at memory latency matters";
  out.table.columns = {"org", "sram_entries", "promotions", "lookup_share", "lookup_us", "queue_ms", "transfer_ms",
                       "sram_hit_rate", "dram_reads", "dropped_no_space", "stall/token_ms"};
  double worst_cached = 0.0, best_full = 1.0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& s = runs[i].stats;
    const bool cached = i % 2 == 1;
    const double q = num(s, "promotion_latency_queue_s"), l = num(s, "promotion_latency_lookup_s"),
                 t = num(s, "promotion_latency_transfer_s");
    const double share = q + l + t > 0 ? l / (q + l + t) : 0.0;
    const nlohmann::json& ix = s["index_organisation"];
    const double hits = ix["cache_hits"].get<double>(), misses = ix["cache_misses"].get<double>();
    const double hit_rate = cached && hits + misses > 0 ? hits / (hits + misses) : 1.0;
    const uint64_t dropped = s["blocks"]["dropped_index_full"].get<uint64_t>();
    if (cached) worst_cached = std::max(worst_cached, share);
    else best_full = std::min(best_full, share);
    out.rows.push_back({{"org", cached ? "cached" : "full"},
                        {"sram_entries", std::stoull(sizes[i / 2])},
                        {"promotions", s["promotions"]},
                        {"lookup_share", share},
                        {"promotion_latency_lookup_s", l},
                        {"promotion_latency_queue_s", q},
                        {"promotion_latency_transfer_s", t},
                        {"sram_hit_rate", hit_rate},
                        {"index_dram_read_bytes", ix["dram_read_bytes"]},
                        {"dropped_index_full", dropped},
                        {"exposed_stall_per_token_s", num(s, "exposed_stall_per_token_s")},
                        {"command", quote_command(runs[i].argv)}});
    out.table.cells.push_back({cached ? "cached" : "full", sizes[i / 2], std::to_string(s["promotions"].get<uint64_t>()),
                               fmt(share), fmt(l * 1e6), fmt(q * 1e3), fmt(t * 1e3), fmt(hit_rate),
                               std::to_string(ix["cache_misses"].get<uint64_t>()), std::to_string(dropped),
                               fmt(num(s, "exposed_stall_per_token_s") * 1e3)});
  }
  out.support_measurement = "  largest lookup share of promotion latency with the index in tier DRAM behind an SRAM cache: " +
                            fmt(worst_cached) + " (material above " + fmt(o.material) + ")\n";
  out.refute_measurement = "  smallest lookup share with a full SRAM index: " + fmt(best_full) +
                           "; the cached organisation's share stays below " + fmt(o.material) +
                           " when the lookup is off the critical path or trivially cacheable\n";
  out.supported = worst_cached >= o.material;
  out.verdict = out.supported ? "supported: a lookup at memory latency is a material share of promotion latency"
                              : "refuted on this workload: even with the table in tier DRAM the lookup is below " +
                                    fmt(o.material * 100, 3) + "% of promotion latency (payload movement dominates)";
  return out;
}

// ---------------------------------------------------------------------------------------------
// C3: host CPU attributable to KV movement, across tenant counts, device vs host-issued DMA.
Outcome c3(const Options& o, const fs::path& work) {
  std::vector<Run> runs;
  const auto counts = split_list(o.tenant_counts, "tenants");
  for (const std::string& count : counts) {
    positive_number(count, "tenants");
    const std::string w = with_option(o.workload, "tenants=" + count);
    for (const char* dma : {"device", "host"})
      runs.push_back({std::string("tenants=") + count + " dma=" + dma, {std::string("host.dma=") + dma}, w, {}, {}});
  }
  run_all(runs, o, work);
  Outcome out;
  out.claim = "C3. Frees host CPU under multi-tenancy";
  out.table.columns = {"tenants", "dma", "cpu_us/token", "core_util", "descriptor_s", "doorbell_s", "completion_s",
                       "copy_issue_s", "tokens"};
  double host_util_at_max = 0, device_util_at_max = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& s = runs[i].stats;
    const nlohmann::json& c = s["host_cpu"];
    const bool host = i % 2 == 1;
    const double util = c["core_utilisation"].get<double>();
    if (i / 2 + 1 == counts.size()) (host ? host_util_at_max : device_util_at_max) = util;
    out.rows.push_back({{"tenants", std::stoul(counts[i / 2])},
                        {"dma", host ? "host" : "device"},
                        {"host_cpu_kv_per_token_s", num(s, "host_cpu_kv_per_token_s")},
                        {"core_utilisation", util},
                        {"descriptor_s", c["descriptor_s"]},
                        {"doorbell_s", c["doorbell_s"]},
                        {"completion_s", c["completion_s"]},
                        {"copy_issue_s", c["copy_issue_s"]},
                        {"tokens_generated", s["tokens_generated"]},
                        {"command", quote_command(runs[i].argv)}});
    out.table.cells.push_back({counts[i / 2], host ? "host" : "device", fmt(num(s, "host_cpu_kv_per_token_s") * 1e6),
                               fmt(util), fmt(c["descriptor_s"].get<double>()), fmt(c["doorbell_s"].get<double>()),
                               fmt(c["completion_s"].get<double>()), fmt(c["copy_issue_s"].get<double>()),
                               std::to_string(s["tokens_generated"].get<uint64_t>())});
  }
  out.support_measurement = "  at " + counts.back() + " tenants, host-issued KV movement uses " + fmt(host_util_at_max) +
                            " of one core and device-side descriptors " + fmt(device_util_at_max) +
                            " (supports when host-issued needs >= " + fmt(o.core_share) + " of a core and the device "
                            "path at most half of that)\n";
  out.refute_measurement = "  host-issued KV movement below " + fmt(o.core_share) + " of one core at " + counts.back() +
                           " tenants: CPU is not the bottleneck\n";
  out.supported = host_util_at_max >= o.core_share && device_util_at_max <= host_util_at_max / 2;
  out.verdict = out.supported ? "supported: host-issued movement costs a material share of a core, device-side far less"
                              : "refuted on this workload: KV movement does not make the host CPU a bottleneck at these "
                                "tenant counts";
  return out;
}

// ---------------------------------------------------------------------------------------------
// C4: persistent policy state across eviction and re-admission, LFU and EMA, over budgets.
Outcome c4(const Options& o, const fs::path& work) {
  std::vector<Run> runs;
  const auto budgets = split_list(o.budgets, "budgets");
  struct Policy {
    std::string name;
    std::vector<std::string> sets;
  };
  const std::vector<Policy> policies = {{"lfu", {"host.policy=lfu"}},
                                        {"ema", {"host.policy=ema", "host.ema_alpha=0.01"}}};
  for (const std::string& b : budgets) {
    positive_number(b, "budgets");
    for (const Policy& p : policies)
      for (const char* persistent : {"false", "true"}) {
        std::vector<std::string> sets = p.sets;
        // The study is of the KV budget (as the spec's own simulation): room for any budget
        // beside the weights.
        sets.insert(sets.end(), {"hbm.capacity_gb=1000", "hbm.kv_budget_gib=" + b,
                                 std::string("host.persistent_policy=") + persistent});
        runs.push_back({p.name + " persistent=" + persistent + " budget=" + b + " GiB", sets, o.workload, {}, {}});
      }
  }
  try {
    run_all(runs, o, work);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.find("unknown key") != std::string::npos || what.find("is not one of") != std::string::npos)
      throw std::runtime_error("c4 needs the replacement policies' platform keys host.policy = lfu | ema, host.ema_alpha "
                               "and host.persistent_policy: " + what);
    throw;
  }
  Outcome out;
  out.claim = "C4. Sustains policy state across eviction and re-admission";
  out.table.columns = {"budget_GiB", "policy", "hit(no persist)", "hit(persist)", "gain_pts", "spec_pts", "A_traffic(no)",
                       "A_traffic(persist)", "A_traffic_opt"};
  std::ostringstream support;
  bool any_gain = false;
  double gain_at_32[2] = {NAN, NAN};
  for (size_t i = 0; i < runs.size(); i += 2) {
    const nlohmann::json& off = runs[i].stats;
    const nlohmann::json& on = runs[i + 1].stats;
    const size_t policy_index = (i / 2) % policies.size();
    const std::string& policy = policies[policy_index].name;
    const std::string& budget = budgets[i / 2 / policies.size()];
    const double gain = (num(on, "hit_rate") - num(off, "hit_rate")) * 100.0;
    const char* spec = "";
    if (budget == "32") {
      spec = policy == "lfu" ? "+34.15" : "+24.85";
      gain_at_32[policy_index] = gain;
    }
    any_gain |= gain > 1.0;
    const nlohmann::json opt = off.contains("a_traffic_opt") ? off["a_traffic_opt"] : nlohmann::json(nullptr);
    out.rows.push_back({{"budget_gib", positive_number(budget, "budgets")},
                        {"policy", policy},
                        {"hit_rate", num(off, "hit_rate")},
                        {"hit_rate_persistent", num(on, "hit_rate")},
                        {"gain_points", gain},
                        {"spec_gain_points", budget == "32" ? nlohmann::json(policy == "lfu" ? 34.15 : 24.85)
                                                            : nlohmann::json(nullptr)},
                        {"a_traffic", off["a_traffic"]},
                        {"a_traffic_persistent", on["a_traffic"]},
                        {"a_traffic_opt", opt},
                        {"commands", {quote_command(runs[i].argv), quote_command(runs[i + 1].argv)}}});
    out.table.cells.push_back({budget, policy, fmt(num(off, "hit_rate")), fmt(num(on, "hit_rate")), fmt(gain, 3), spec,
                               fmt(num(off, "a_traffic")), fmt(num(on, "a_traffic")),
                               opt.is_null() ? "n/a" : fmt(opt.get<double>())});
  }
  support << "  hit-rate gain of persistent state, points, at 32 GiB: LFU "
          << (std::isnan(gain_at_32[0]) ? "not run" : fmt(gain_at_32[0], 3)) << " (spec +34.15), EMA a=0.01 "
          << (std::isnan(gain_at_32[1]) ? "not run" : fmt(gain_at_32[1], 3)) << " (spec +24.85)\n";
  out.support_measurement = support.str();
  out.refute_measurement =
      "  gains within 1 point at every budget (persistence changes nothing); this model keeps the state in the host's "
      "policy store, so any gain here is one host-side persistence already achieves\n";
  out.supported = any_gain;
  out.verdict = any_gain ? "persistent policy state changes hit rate by more than 1 point at some budget (host-side "
                           "persistence, as modelled here, achieves it: the spec's refutation clause applies to where, not "
                           "whether)"
                         : "refuted on this workload: persistence changes hit rate by less than 1 point at every budget";
  return out;
}

}  // namespace

// The claims compare one choice of the data path, index or policy with the placement fixed: on
// pinned residency which blocks move does not depend on how fast they move, whereas streamed
// residency (the default platform's) spills and restores by timing, so each side of a
// comparison would move different blocks.
constexpr const char* kExperimentPlatform = "h200-cxl2-x16-pinned";

int cmd_experiment(int argc, char** argv) {
  Options o;
  po::options_description desc("kvtier experiment options");
  desc.add_options()("help,h", "show this help")(
      "experiment", po::value<std::string>(&o.experiment)->value_name("c1|c2|c3|c4"), "the claim to test (spec §M.3.2)")(
      "platform", po::value<std::string>(&o.platform)->default_value(kExperimentPlatform)->value_name("FILE"),
      "platform INI file; default: the pinned preset (all-layer blocks, pinned residency), on which both sides of each "
      "comparison move the same blocks (docs/experiments.md); empty: the embedded default platform")(
      "workload", po::value<std::string>(&o.workload)->default_value(std::string("mooncake:") + kDefaultTrace)->value_name("SPEC"),
      "workload (default: the bundled Mooncake conversation excerpt; the full trace: mooncake:/path/conversation_trace.jsonl)")(
      "set", po::value<std::vector<std::string>>(&o.overrides)->composing()->value_name("SECTION.KEY=VALUE"),
      "platform override for every simulation (repeatable); the experiment's own variable wins")(
      "seed", po::value<uint64_t>(&o.seed)->default_value(1), "random seed")(
      "json", po::value<std::string>(&o.json)->default_value("")->value_name("FILE"), "write the table as JSON")(
      "keep", po::value<std::string>(&o.keep)->default_value("")->value_name("DIR"),
      "keep every simulation's stats.json under DIR (default: a temporary directory, removed)")(
      "jobs,j", po::value<unsigned>(&o.jobs)->default_value(1), "simulations run at once")(
      "loads", po::value<std::string>(&o.loads)->default_value("1"), "c1: trace replay speed-ups (rate_scale), comma-separated")(
      "index-sizes", po::value<std::string>(&o.index_sizes)->default_value(""),
      "c2: SRAM index entries, powers of two (default 1024,4096,16384,65536)")(
      "tenants", po::value<std::string>(&o.tenant_counts)->default_value("1,4,16,64"), "c3: tenant counts")(
      "budgets", po::value<std::string>(&o.budgets)->default_value("8,16,32,64"), "c4: HBM KV budgets, GiB")(
      "material", po::value<double>(&o.material)->default_value(0.01), "c2: lookup share that is material")(
      "core-share", po::value<double>(&o.core_share)->default_value(0.10, "0.1"), "c3: share of one core that is material")(
      "stall-difference", po::value<double>(&o.stall_difference)->default_value(0.05, "0.05"),
      "c1: relative exposed-stall difference that is material");
  po::positional_options_description positional;
  positional.add("experiment", 1);
  po::variables_map vm;
  const std::string usage = "kvtier experiment c1|c2|c3|c4 [--workload SPEC] [--json FILE] [options]";
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(desc).positional(positional).run();
    check_arguments(parsed, desc);
    po::store(parsed, vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n"
                << "  c1  promotion latency (p50/p99) and exposed stall: device-side scheduling vs host-issued DMA\n"
                << "  c2  share of promotion latency in the index lookup: full SRAM index vs cached (table in tier DRAM)\n"
                << "  c3  host CPU time attributable to KV movement per token and per core, across tenant counts\n"
                << "  c4  hit rate and A_traffic of LFU and EMA (a = 0.01) with and without persistent policy state\n\n"
                << desc;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kvtier experiment: " << e.what() << "\nusage: " << usage << "\n";
    return 2;
  }
  if (o.experiment.empty()) {
    std::cerr << "kvtier experiment: name an experiment (c1, c2, c3 or c4)\nusage: " << usage << "\n";
    return 2;
  }
  const std::map<std::string, Outcome (*)(const Options&, const fs::path&)> experiments = {
      {"c1", c1}, {"c2", c2}, {"c3", c3}, {"c4", c4}};
  auto which = experiments.find(o.experiment);
  if (which == experiments.end()) {
    std::cerr << "kvtier experiment: unknown experiment '" << o.experiment << "' (known: c1, c2, c3, c4)\n";
    return 2;
  }
  return guarded("experiment", [&]() {
    require_output_file("json", o.json);
    require_range("jobs", o.jobs, 1, 1024, "simulations at once");
    if (o.jobs == 0) throw std::invalid_argument("--jobs must be at least 1");
    fs::path work;
    bool remove = false;
    if (!o.keep.empty()) {
      work = o.keep;
      fs::create_directories(work);
    } else {
      std::string pattern = (fs::temp_directory_path() / "kvtier-experiment-XXXXXX").string();
      if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory");
      work = pattern;
      remove = true;
    }
    struct Cleanup {
      fs::path dir;
      bool active;
      ~Cleanup() {
        std::error_code ec;
        if (active) fs::remove_all(dir, ec);
      }
    } cleanup{work, remove};
    std::cerr << "kvtier experiment " << o.experiment << ": workload " << o.workload << "\n";
    Outcome out = which->second(o, work);
    std::cout << out.claim << "\nworkload: " << o.workload << "\n\n";
    out.table.print(std::cout);
    std::cout << "\nmeasurement that would support it:\n" << out.support_measurement
              << "measurement that would refute it:\n" << out.refute_measurement << "verdict: " << out.verdict << "\n";
    if (!o.json.empty()) {
      nlohmann::ordered_json j;
      j["experiment"] = o.experiment;
      j["claim"] = out.claim;
      j["workload"] = o.workload;
      j["seed"] = o.seed;
      j["overrides"] = o.overrides;
      j["rows"] = out.rows;
      j["support_measurement"] = out.support_measurement;
      j["refute_measurement"] = out.refute_measurement;
      j["supported"] = out.supported;
      j["verdict"] = out.verdict;
      std::ofstream f(o.json);
      f << j.dump(2) << "\n";
      if (!f) throw std::runtime_error("cannot write " + o.json);
      std::cout << "wrote " << o.json << "\n";
    }
    return 0;
  });
}

}  // namespace kvtier
