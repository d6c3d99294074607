"""torch.nn.modules.rnn: recurrent layers and cells, re-exported from oar.nn (the same classes)."""
from ..rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
