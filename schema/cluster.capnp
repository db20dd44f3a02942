# Cluster descriptions on the wire: ClusterDef / JobDef / ServerDef, as in TensorFlow.
@0xb3338abdfae0ca0a;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("troupe::wire");

struct TaskEntry {
  index @0 :Int32;
  address @1 :Text;  # "host:port"
}

# A job: its tasks by index. A dense job has indices 0..n-1; a sparse one may have holes.
struct JobDef {
  name @0 :Text;
  tasks @1 :List(TaskEntry);
}

struct ClusterDef {
  jobs @0 :List(JobDef);
}

# Settings a session inherits from its server unless it overrides them.
struct SessionConfig {
  isolateSessionState @0 :Bool;
  operationTimeoutMs @1 :Int64;  # 0 means no default deadline
  intraOpThreads @2 :Int32;      # 0 means one per core
  deviceFilters @3 :List(Text);  # partial device names; empty means every device
  allowSoftPlacement @4 :Bool;  # TensorFlow's ConfigProto.allow_soft_placement
  cpuDevices @5 :Int32;          # CPU devices per task; 0 means one
}

struct ServerDef {
  cluster @0 :ClusterDef;
  jobName @1 :Text;
  taskIndex @2 :Int32;
  protocol @3 :Text;
  defaultSessionConfig @4 :SessionConfig;
}
