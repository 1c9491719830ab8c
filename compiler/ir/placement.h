// Where a graph's data lives: the buffer a view reads, the devices a tuple names, the device a graph runs
// on. One definition each for the schedule, the Tensor API, the gradient rules and the runtime. Tested in
// placement_test.cc.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// The BUFFER a chain of RESHAPEs over it views (u itself when u is a BUFFER): realizing u needs no kernel.
// A null handle when u is no such view. A reshape of a view is a view of the same buffer, however deep. The
// handle is u's own or one of its graph's: valid while u lives.
const UPtr& base_buffer(const UPtr& u);

// The BUFFER a window of it views: a chain of RESHAPEs, PERMUTEs and SHRINKs (moved by offsets too) over it,
// each element of the view one element of the buffer, so a store through it writes the buffer (an assign into
// a window). A null handle otherwise (a pad, an expand or a flip on the way).
const UPtr& window_buffer(const UPtr& u);

// A device tuple, the device of a sharded tensor's buffers: "(CPU, CPU:1)" names one shard per device.
// device_tuple splits it ({"CPU", "CPU:1"}, spaces dropped); a plain name gives itself alone; rg::Error for
// a tuple without its ')' or with an empty member. tuple_name joins names as device_tuple reads them.
bool is_device_tuple(const std::string& name);
std::vector<std::string> device_tuple(const std::string& name);
std::string tuple_name(const std::vector<std::string>& devices);

// The device a graph computes on, as its nodes name it: a BUFFER's device, a COPY's target (the copy runs
// there; what it reads lives elsewhere), else that of its first source that has one; "" for a graph of
// constants. The Tensor API keeps one device per graph, so this is the device of every BUFFER it reads
// outside a COPY.
std::string graph_device(const UPtr& root);

}  // namespace rg
