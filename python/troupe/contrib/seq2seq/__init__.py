"""tf.contrib.seq2seq: sequence_loss; the Decoder interface, dynamic_decode and BasicDecoder;
the helpers (Training, GreedyEmbedding, SampleEmbedding, Inference, Custom); BeamSearchDecoder,
gather_tree and tile_batch; AttentionWrapper with LuongAttention, BahdanauAttention and their
monotonic forms, monotonic_attention, safe_cumprod and hardmax; the scheduled-sampling
helpers."""

from .attention_wrapper import (AttentionMechanism, AttentionWrapper,  # noqa: F401
                                AttentionWrapperState, BahdanauAttention,
                                BahdanauMonotonicAttention, LuongAttention,
                                LuongMonotonicAttention, hardmax, monotonic_attention,
                                safe_cumprod)
from .beam_search_decoder import (BeamSearchDecoder, BeamSearchDecoderOutput,  # noqa: F401
                                  BeamSearchDecoderState, FinalBeamSearchDecoderOutput,
                                  gather_tree)
from .basic_decoder import BasicDecoder, BasicDecoderOutput  # noqa: F401
from .decoder import Decoder, dynamic_decode  # noqa: F401
from .helper import (CustomHelper, GreedyEmbeddingHelper, Helper, InferenceHelper,  # noqa: F401
                     SampleEmbeddingHelper, ScheduledEmbeddingTrainingHelper,
                     ScheduledOutputTrainingHelper, TrainingHelper)
from .loss import sequence_loss  # noqa: F401
from .tile import tile_batch  # noqa: F401
