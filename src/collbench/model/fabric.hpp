// Scale-out fabric terms that depend on how many domains a job spans (docs/model.md, "Expected
// from 1 to 20 racks"): the taper above the leaf and static-ECMP hash collisions on the leaf's
// uplinks. Both are neutral unless the profile states the topology (scale_out.leaf_domains,
// scale_out.routing, scale_out.ecmp_uplinks, scale_out.ecmp_flows). Pure functions.
#pragma once

#include "collbench/model/system_profile.hpp"

namespace collbench::model {

// Expected load of the most loaded of `uplinks` equal bins when `flows` equal flows are hashed
// uniformly and independently onto them (balls into bins), computed exactly:
// E[max] = sum over c >= 0 of (1 - P(every bin holds <= c flows)). 1 <= flows, uplinks <= 1024.
double ecmp_expected_max_load(int flows, int uplinks);

// The rate factor of static ECMP: the flows finish when the most loaded uplink does, against a
// perfect spread of ceil(flows / uplinks) flows per uplink: ceil(f/u) / E[max load]. In (0, 1].
double ecmp_rate_factor(int flows, int uplinks);

// True when a job over `num_domains` domains sends traffic above the leaf (across the spine):
// more than one domain, and more domains than one leaf group serves (every multi-domain job
// when scale_out.leaf_domains is not stated).
bool crosses_spine(const ScaleOut& s, int num_domains);

// Per-GPU off-domain line rate for a job over `num_domains` domains: the NICs, divided by the
// taper when the traffic crosses the spine (every multi-domain job when leaf_domains is unset,
// as before leaf_domains existed).
double scale_out_line_rate(const ScaleOut& s, int num_domains);

// What static ECMP leaves of the scale-out rate (expected only): ecmp_rate_factor of the
// profile's flows and uplinks when routing is ecmp and the traffic crosses the spine, else 1.
double scale_out_routing_factor(const ScaleOut& s, int num_domains);

}  // namespace collbench::model
