#pragma once
// The switch between a replica's host link and a shared tier's device (tier.shared), as the
// messages see it: every transaction crossing it, either way, takes switch.latency_ns more, and a
// read's data takes it again on the way back. A switch terminates the link layer on each of its
// ports (ACK/NAK, retry and credits are per hop), so the host's link keeps its own round trips
// and the switch adds only its forwarding latency. The DMA bursts' direct path adds the same in
// HeadPath (pool_device.h).
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace kvtier {

class SwitchHop : public sc_core::sc_module {
 public:
  // Host -> device: from the host link's device side to the device head's MMIO port.
  tlm_utils::simple_target_socket<SwitchHop> down_in{"down_in"};
  tlm_utils::simple_initiator_socket<SwitchHop> down_out{"down_out"};
  // Device -> host: from the head's DMA and completions to the host link's device side.
  tlm_utils::simple_target_socket<SwitchHop> up_in{"up_in"};
  tlm_utils::simple_initiator_socket<SwitchHop> up_out{"up_out"};

  SwitchHop(sc_core::sc_module_name name, double latency_ns)
      : sc_core::sc_module(name), latency_(latency_ns, sc_core::SC_NS) {
    down_in.register_b_transport(this, &SwitchHop::down);
    up_in.register_b_transport(this, &SwitchHop::up);
  }

 private:
  void down(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) { cross(down_out, t, delay); }
  void up(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) { cross(up_out, t, delay); }
  void cross(tlm_utils::simple_initiator_socket<SwitchHop>& out, tlm::tlm_generic_payload& t,
             sc_core::sc_time& delay) {
    delay += latency_;
    out->b_transport(t, delay);
    if (t.is_read()) delay += latency_;  // the data comes back through the switch
  }

  const sc_core::sc_time latency_;
};

}  // namespace kvtier
