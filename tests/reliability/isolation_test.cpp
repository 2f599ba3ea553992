// Tenant isolation of the data plane's index: every tenant probes every other tenant's keys,
// shareable and not, with every opcode, before and after eviction (FREE) and re-admission of
// the freed keys by another tenant with the opposite shareability. Expected (tools/cmdset/
// kvdp_cmdset.tbl, tenant rule): PROMOTE, QUERY and DEMOTE see a foreign entry only when it is
// shareable; DISCARD, FREE, UPDATE_POLICY, PIN, UNPIN and RECOMPRESS are owner-only. So: 0
// unauthorised hits, every refusal answered DENIED and counted in the controller's per-status
// counters. Run against both data planes, the TLM reference and the Verilated RTL engine
// (one elaboration per process: gtest_discover_tests runs each case on its own).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "cosim/data_plane.h"
#include "tests/tlm/sc_test_main.h"
#include "tlm/common/address_router.h"
#include "tlm/ctrl/address_map.h"
#include "tlm/link/transact.h"
#include "tlm/mem/memory_target.h"

using namespace kvtier;
using cmdset::Opcode;
using cmdset::Status;

namespace {

constexpr uint32_t kTenants = 4;
constexpr uint32_t kSets = 8;  // keys crowd into 8 index sets: with 4 ways, every set is full
constexpr uint32_t kBlockBytes = 4096;

struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> out{"out"};
  explicit Initiator(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
};

struct CompletionSink : sc_core::sc_module {
  tlm_utils::simple_target_socket<CompletionSink> in{"in"};
  std::vector<cmdset::Completion> completions;
  explicit CompletionSink(sc_core::sc_module_name n) : sc_core::sc_module(n) {
    in.register_b_transport(this, &CompletionSink::transport);
  }
  void transport(tlm::tlm_generic_payload& t, sc_core::sc_time&) {
    completions.push_back(cmdset::decode_completion(t.get_data_ptr()));
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// Host initiator -> data plane -> tier DRAM; the data plane's upstream traffic goes to HBM
// (payload) and host memory (completions). No link: isolation is the index's business.
struct Bench : sc_core::sc_module {
  Initiator host{"host"};
  std::unique_ptr<DataPlane> dp;
  MemoryTarget tier{"tier", 76.8e9, sc_core::sc_time(110, sc_core::SC_NS), 1ull << 38};
  MemoryTarget hbm{"hbm", 4000e9, sc_core::sc_time(500, sc_core::SC_NS), 141'000'000'000ull};
  CompletionSink host_mem{"host_mem"};
  AddressRouter bus{"bus"};
  uint32_t tail = 0;
  uint16_t next_tag = 1;
  uint64_t posted = 0;

  Bench(sc_core::sc_module_name name, const CtrlConfig& cc)
      : sc_core::sc_module(name), dp(make_data_plane("dp", cc)) {
    host.out.bind(dp->mmio_in());
    dp->tier_out().bind(tier.in);
    dp->host_out().bind(bus.in);
    bus.add_window(addr::kHbmBase, hbm.capacity_bytes());
    bus.out.bind(hbm.in);
    bus.add_window(addr::kHostMemBase, addr::kHostMemSize);
    bus.out.bind(host_mem.in);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // ends elaboration
  }

  // One descriptor, one doorbell; returns its completion.
  cmdset::Completion run(cmdset::Descriptor d) {
    d.tag = next_tag++;
    const sc_core::sc_time at(static_cast<double>(++posted) * 20.0, sc_core::SC_US);
    uint8_t bytes[cmdset::kDescriptorBytes];
    cmdset::encode(d, bytes);
    transact(host.out, tlm::TLM_WRITE_COMMAND,
             addr::kRingBase + tail * uint64_t{cmdset::kDescriptorBytes}, bytes,
             cmdset::kDescriptorBytes, TxnClass::DescriptorWrite, at);
    tail = (tail + 1) % 1024;  // CtrlConfig::ring_entries
    uint8_t db[cmdset::kDoorbellBytes];
    cmdset::encode(cmdset::Doorbell{tail}, db);
    transact(host.out, tlm::TLM_WRITE_COMMAND, addr::kDoorbell, db, cmdset::kDoorbellBytes,
             TxnClass::Doorbell, at);
    if (host_mem.completions.empty() || host_mem.completions.back().tag != d.tag)
      throw std::runtime_error("no completion for tag " + std::to_string(d.tag));
    return host_mem.completions.back();
  }
};

struct Owned {
  uint16_t tenant;
  bool shareable;
};

cmdset::Descriptor descriptor(Opcode op, uint64_t key, uint16_t tenant, bool shareable = false) {
  cmdset::Descriptor d;
  d.opcode = op;
  d.key = key;
  d.tenant = tenant;
  d.flags = shareable ? static_cast<uint8_t>(cmdset::DescFlag::SHAREABLE) : 0;
  d.hbm_addr = key % (1ull << 24) * kBlockBytes;
  d.tier_addr = d.hbm_addr;
  d.length = kBlockBytes;
  d.format = cmdset::Format::BF16;
  d.prio = 7;
  d.policy = 0x1234;
  return d;
}

const std::vector<Opcode> kProbes = {Opcode::PROMOTE, Opcode::QUERY, Opcode::DEMOTE,
                                     Opcode::DISCARD, Opcode::FREE,  Opcode::UPDATE_POLICY,
                                     Opcode::PIN,     Opcode::UNPIN, Opcode::RECOMPRESS};

// The tenant rule, written out: which probes of a foreign entry the index must grant.
bool granted(Opcode op, bool shareable) {
  return shareable && (op == Opcode::PROMOTE || op == Opcode::QUERY || op == Opcode::DEMOTE);
}

struct Tally {
  uint64_t probes = 0, expected_denials = 0, denied = 0, unauthorised_hits = 0, wrong_status = 0;
  uint64_t granted_shared = 0;
};

// Every tenant probes every entry it does not own with every opcode.
void probe_all(Bench& b, const std::map<uint64_t, Owned>& owners, Tally& t) {
  for (uint16_t prober = 0; prober < kTenants; ++prober) {
    for (const auto& [key, owner] : owners) {
      if (owner.tenant == prober) continue;
      for (const Opcode op : kProbes) {
        const cmdset::Completion c = b.run(descriptor(op, key, prober));
        ++t.probes;
        const bool expect_grant = granted(op, owner.shareable);
        if (!expect_grant) ++t.expected_denials;
        if (c.status == Status::DENIED) ++t.denied;
        if (!expect_grant && c.status != Status::DENIED) {
          ++t.unauthorised_hits;
          ADD_FAILURE() << "tenant " << prober << " " << cmdset::to_string(op) << " of key " << key
                        << " (owner " << owner.tenant << (owner.shareable ? ", shareable" : "")
                        << ") answered " << cmdset::to_string(c.status);
        }
        if (expect_grant) {
          // A shareable entry is visible: PROMOTE and QUERY succeed, DEMOTE finds the tier copy.
          if (c.status != Status::OK) ++t.wrong_status;
          else ++t.granted_shared;
          if (op == Opcode::DEMOTE) {
            EXPECT_NE(c.flags & static_cast<uint8_t>(cmdset::CplFlag::WRITE_ONCE_SKIP), 0);
          }
        }
      }
    }
  }
}

// Every entry still belongs to its owner, unchanged by the foreign probes.
void expect_owners_unchanged(Bench& b, const std::map<uint64_t, Owned>& owners) {
  for (const auto& [key, owner] : owners) {
    const auto slot = b.dp->index().find(key);
    ASSERT_TRUE(slot.has_value()) << "key " << key << " left the index";
    const IndexEntry& e = b.dp->index().at(*slot);
    EXPECT_EQ(e.tenant, owner.tenant) << "key " << key;
    EXPECT_EQ(e.shareable, owner.shareable) << "key " << key;
    EXPECT_FALSE(e.pinned) << "key " << key << " pinned by a foreign PIN";
    EXPECT_EQ(e.prio, 7) << "key " << key << " policy changed by a foreign UPDATE_POLICY";
    EXPECT_EQ(e.policy, 0x1234u) << "key " << key;
    EXPECT_EQ(b.run(descriptor(Opcode::QUERY, key, owner.tenant)).status, Status::OK)
        << "owner lost key " << key;
  }
}

void isolation(const std::string& impl) {
  CtrlConfig cc;  // the default platform's [ctrl]: the geometry the RTL engine is built with
  cc.impl = impl == "rtl" ? DataPlaneImpl::Rtl : DataPlaneImpl::Tlm;
  if (impl == "rtl") {
    ASSERT_EQ(cosim::rtl_config_mismatch(cc), "");
  }
  Bench b("bench", cc);
  const uint64_t sets = cc.index_sets;
  auto key_of = [&](uint32_t tenant, uint32_t set) { return set + sets * (tenant + 1); };

  // Admission: tenant t owns one key in each of the 8 sets (4 tenants fill the 4 ways), every
  // other one shareable.
  std::map<uint64_t, Owned> owners;
  for (uint16_t t = 0; t < kTenants; ++t)
    for (uint32_t s = 0; s < kSets; ++s) {
      const bool shareable = (s + t) % 2 == 0;
      ASSERT_EQ(b.run(descriptor(Opcode::DEMOTE, key_of(t, s), t, shareable)).status, Status::OK);
      owners[key_of(t, s)] = {t, shareable};
    }
  // The sets are full: a fifth key in one of them has no way.
  ASSERT_EQ(b.run(descriptor(Opcode::DEMOTE, key_of(kTenants, 0), 0)).status, Status::NO_SPACE);

  const uint64_t denied_before = b.dp->stats().per_status[static_cast<size_t>(Status::DENIED)];
  Tally t;
  probe_all(b, owners, t);
  expect_owners_unchanged(b, owners);

  // Eviction: each owner FREEs its keys in the even sets. Re-admission: the next tenant DEMOTEs
  // the same keys into the freed ways, with the opposite shareability; the old owner is now a
  // foreigner to its former key.
  for (auto& [key, owner] : owners) {
    if ((key % sets) % 2 != 0) continue;
    ASSERT_EQ(b.run(descriptor(Opcode::FREE, key, owner.tenant)).status, Status::OK);
    ASSERT_EQ(b.run(descriptor(Opcode::QUERY, key, owner.tenant)).status, Status::MISS);
  }
  for (auto& [key, owner] : owners) {
    if ((key % sets) % 2 != 0) continue;
    owner = {static_cast<uint16_t>((owner.tenant + 1) % kTenants), !owner.shareable};
    ASSERT_EQ(b.run(descriptor(Opcode::DEMOTE, key, owner.tenant, owner.shareable)).status,
              Status::OK);
  }
  probe_all(b, owners, t);
  expect_owners_unchanged(b, owners);

  const uint64_t denied_counted =
      b.dp->stats().per_status[static_cast<size_t>(Status::DENIED)] - denied_before;
  // Hand count: 32 entries, each probed by the 3 other tenants with 9 opcodes, twice = 1728
  // probes. Half the entries are shareable in each round (3 granted opcodes each):
  // 2 rounds x 16 shareable entries x 3 tenants x 3 opcodes = 288 grants, 1440 denials.
  EXPECT_EQ(t.probes, 2u * 32 * 3 * 9);
  EXPECT_EQ(t.expected_denials, 1440u);
  EXPECT_EQ(t.unauthorised_hits, 0u);
  EXPECT_EQ(t.wrong_status, 0u);
  EXPECT_EQ(t.granted_shared, 288u);
  EXPECT_EQ(t.denied, t.expected_denials);
  EXPECT_EQ(denied_counted, t.expected_denials);
  std::printf(
      "isolation (%s): %llu probes, %llu denials expected, %llu answered DENIED, %llu counted, "
      "%llu unauthorised hits, %llu shared grants\n",
      impl.c_str(), static_cast<unsigned long long>(t.probes),
      static_cast<unsigned long long>(t.expected_denials),
      static_cast<unsigned long long>(t.denied), static_cast<unsigned long long>(denied_counted),
      static_cast<unsigned long long>(t.unauthorised_hits),
      static_cast<unsigned long long>(t.granted_shared));
}

}  // namespace

TEST(Isolation, TlmIndexDeniesEveryForeignProbe) { isolation("tlm"); }
TEST(Isolation, RtlIndexDeniesEveryForeignProbe) { isolation("rtl"); }

KVTIER_SC_TEST_MAIN()
