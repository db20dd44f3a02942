"""tf.train: clusters and servers, optimizers, the monitored session, hooks and checkpoints."""

from . import queue_runner
from .input import (batch, batch_join, input_producer, limit_epochs, match_filenames_once,
                    maybe_batch, maybe_batch_join, maybe_shuffle_batch,
                    maybe_shuffle_batch_join, range_input_producer, shuffle_batch,
                    shuffle_batch_join, slice_input_producer, string_input_producer)
from .coordinator import Coordinator, LooperThread
from .device_setter import replica_device_setter
from .hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
                    GlobalStepWaiterHook, LoggingTensorHook, NanLossDuringTrainingError,
                    NanTensorHook, ProfilerHook, SecondOrStepTimer, SessionRunArgs,
                    SessionRunContext, SessionRunHook, SessionRunValues, StepCounterHook,
                    StopAtStepHook, SummarySaverHook)
from .moving_averages import ExponentialMovingAverage
from .checkpoint_utils import (NewCheckpointReader, init_from_checkpoint, list_variables,
                               load_checkpoint, load_variable)
from .monitored_session import (ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession,
                                SessionCreator, SingularMonitoredSession, WorkerSessionCreator)
from .scaffold import Scaffold
from .warm_starting_util import VocabInfo, warm_start
from ..example_pb import (BytesList, Example, Feature, FeatureList, FeatureLists,  # noqa: F401
                          Features, FloatList, Int64List, SequenceExample)
from ..summary import summary_iterator
from .queue_runner import QueueRunner, add_queue_runner, start_queue_runners
from .learning_rate_decay import (cosine_decay, exponential_decay, inverse_time_decay,
                                  natural_exp_decay, piecewise_constant, polynomial_decay)
from .optimizer import (AdadeltaOptimizer, AdagradOptimizer, AdamOptimizer, FtrlOptimizer,
                        GradientDescentOptimizer, MomentumOptimizer, Optimizer,
                        ProximalAdagradOptimizer, ProximalGradientDescentOptimizer,
                        RMSPropOptimizer, SyncReplicasOptimizer)
from .saver import (CheckpointState, Saver, checkpoint_exists, get_checkpoint_mtimes,
                    get_checkpoint_state, latest_checkpoint)
from .server_lib import ClusterDef, ClusterSpec, JobDef, Server, ServerDef
from .session_manager import SessionManager
from .supervisor import Supervisor
from .training_util import (get_global_step, get_or_create_global_step, global_step,
                            write_graph)
