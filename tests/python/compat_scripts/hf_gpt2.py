"""A GPT-2 style decoder written the way HuggingFace's modeling_gpt2.py writes it for PyTorch 1.13, with its
generation utilities.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): Conv1D as torch.addmm with a
transposed weight, a torch.bool tril `bias` buffer with torch.where(causal_mask, w, torch.full([], finfo.min)),
an extended attention mask, past_key_values caching with torch.cat, weight tying, apply(_init_weights) with
.data.normal_/.zero_, and "from_pretrained"-style loading through transformers' _load_state_dict_into_model
(module._load_from_state_dict with the state dict's _metadata). Generation: greedy (with and without the
cache), repetition penalty (gather/where/scatter_), top-k/top-p filtering (sort, cumsum of softmax, scatter
back, masked_fill -inf) sampled by inverse CDF from NumPy uniforms, and beam search (topk, // and %,
index_select on the cache).

The initial weights come from a NumPy RandomState, and the batches from NumPy, so the printed losses and
tokens depend on nothing else and can be compared with another framework's.
"""
import math
from dataclasses import dataclass
from typing import Optional, Tuple
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.nn import CrossEntropyLoss

torch.manual_seed(0)


@dataclass
class GPT2Config:
    vocab_size: int = 50
    n_positions: int = 48
    n_embd: int = 32
    n_layer: int = 2
    n_head: int = 4
    n_inner: Optional[int] = None
    activation_function: str = "gelu_new"
    resid_pdrop: float = 0.0
    embd_pdrop: float = 0.0
    attn_pdrop: float = 0.0
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02
    scale_attn_weights: bool = True
    use_cache: bool = True
    bos_token_id: int = 1
    eos_token_id: int = 2
    pad_token_id: int = 0
    scale_attn_by_inverse_layer_idx: bool = False
    reorder_and_upcast_attn: bool = False


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        w = torch.empty(nx, nf)
        nn.init.normal_(w, std=0.02)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        x = x.view(size_out)
        return x


class GPT2Attention(nn.Module):
    def __init__(self, config, is_cross_attention=False, layer_idx=None):
        super().__init__()
        max_positions = config.n_positions
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions),
        )
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.embed_dim = config.n_embd
        self.num_heads = config.n_head
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.scale_attn_weights = config.scale_attn_weights
        self.layer_idx = layer_idx
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)
        self.pruned_heads = set()

    def _attn(self, query, key, value, attention_mask=None, head_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        if self.scale_attn_weights:
            attn_weights = attn_weights / torch.full(
                [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device
            )
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length].to(torch.bool)
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        if head_mask is not None:
            attn_weights = attn_weights * head_mask
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, head_mask=None, use_cache=False, output_attentions=False):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        if use_cache is True:
            present = (key, value)
        else:
            present = None
        attn_output, attn_weights = self._attn(query, key, value, attention_mask, head_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)
        outputs = (attn_output, present)
        if output_attentions:
            outputs += (attn_weights,)
        return outputs


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, config):
        super().__init__()
        embed_dim = config.n_embd
        self.c_fc = Conv1D(intermediate_size, embed_dim)
        self.c_proj = Conv1D(embed_dim, intermediate_size)
        self.act = NewGELUActivation()
        self.dropout = nn.Dropout(config.resid_pdrop)

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return self.dropout(hidden_states)


class GPT2Block(nn.Module):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        hidden_size = config.n_embd
        inner_dim = config.n_inner if config.n_inner is not None else 4 * hidden_size
        self.ln_1 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config, layer_idx=layer_idx)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.mlp = GPT2MLP(inner_dim, config)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, head_mask=None, use_cache=False, output_attentions=False):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_outputs = self.attn(hidden_states, layer_past=layer_past, attention_mask=attention_mask, head_mask=head_mask,
                                 use_cache=use_cache, output_attentions=output_attentions)
        attn_output = attn_outputs[0]
        outputs = attn_outputs[1:]
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        hidden_states = residual + feed_forward_hidden_states
        if use_cache:
            outputs = (hidden_states,) + outputs
        else:
            outputs = (hidden_states,) + outputs[1:]
        return outputs


class GPT2PreTrainedModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, Conv1D)):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)
        for name, p in module.named_parameters():
            if name == "c_proj.weight":
                p.data.normal_(mean=0.0, std=(self.config.initializer_range / math.sqrt(2 * self.config.n_layer)))


class GPT2Model(GPT2PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed_dim = config.n_embd
        self.wte = nn.Embedding(config.vocab_size, self.embed_dim)
        self.wpe = nn.Embedding(config.n_positions, self.embed_dim)
        self.drop = nn.Dropout(config.embd_pdrop)
        self.h = nn.ModuleList([GPT2Block(config, layer_idx=i) for i in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(self.embed_dim, eps=config.layer_norm_epsilon)
        self.apply(self._init_weights)

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, position_ids=None, use_cache=None):
        input_shape = input_ids.size()
        input_ids = input_ids.view(-1, input_shape[-1])
        batch_size = input_ids.shape[0]
        device = input_ids.device
        if past_key_values is None:
            past_length = 0
            past_key_values = tuple([None] * len(self.h))
        else:
            past_length = past_key_values[0][0].size(-2)
        if position_ids is None:
            position_ids = torch.arange(past_length, input_shape[-1] + past_length, dtype=torch.long, device=device)
            position_ids = position_ids.unsqueeze(0).view(-1, input_shape[-1])
        if attention_mask is not None:
            attention_mask = attention_mask.view(batch_size, -1)
            attention_mask = attention_mask[:, None, None, :]
            attention_mask = attention_mask.to(dtype=self.wte.weight.dtype)
            attention_mask = (1.0 - attention_mask) * torch.finfo(self.wte.weight.dtype).min
        inputs_embeds = self.wte(input_ids)
        position_embeds = self.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        hidden_states = self.drop(hidden_states)
        output_shape = input_shape + (hidden_states.size(-1),)
        presents = () if use_cache else None
        for i, (block, layer_past) in enumerate(zip(self.h, past_key_values)):
            outputs = block(hidden_states, layer_past=layer_past, attention_mask=attention_mask, use_cache=use_cache)
            hidden_states = outputs[0]
            if use_cache is True:
                presents = presents + (outputs[1],)
        hidden_states = self.ln_f(hidden_states)
        hidden_states = hidden_states.view(output_shape)
        return hidden_states, presents


class GPT2LMHeadModel(GPT2PreTrainedModel):
    _keys_to_ignore_on_load_missing = [r"attn.masked_bias", r"attn.bias", r"lm_head.weight"]

    def __init__(self, config):
        super().__init__(config)
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.apply(self._init_weights)
        self.lm_head.weight = self.transformer.wte.weight  # tie

    def forward(self, input_ids, past_key_values=None, attention_mask=None, position_ids=None, labels=None, use_cache=None):
        hidden_states, presents = self.transformer(input_ids, past_key_values=past_key_values, attention_mask=attention_mask,
                                                   position_ids=position_ids, use_cache=use_cache)
        lm_logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:
            shift_logits = lm_logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss_fct = CrossEntropyLoss()
            loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        return {"loss": loss, "logits": lm_logits, "past_key_values": presents}

    @staticmethod
    def _reorder_cache(past, beam_idx):
        return tuple(tuple(past_state.index_select(0, beam_idx.to(past_state.device)) for past_state in layer_past) for layer_past in past)


def top_k_top_p_filtering(logits, top_k=0, top_p=1.0, filter_value=-float("Inf"), min_tokens_to_keep=1):
    if top_k > 0:
        top_k = min(max(top_k, min_tokens_to_keep), logits.size(-1))
        indices_to_remove = logits < torch.topk(logits, top_k)[0][..., -1, None]
        logits = logits.masked_fill(indices_to_remove, filter_value)
    if top_p < 1.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        sorted_indices_to_remove = cumulative_probs > top_p
        if min_tokens_to_keep > 1:
            sorted_indices_to_remove[..., :min_tokens_to_keep] = 0
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 0] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
        logits = logits.masked_fill(indices_to_remove, filter_value)
    return logits


def top_p_warper_v2(scores, top_p, filter_value=-float("Inf"), min_tokens_to_keep=1):
    """HF TopPLogitsWarper (4.2x): ascending sort."""
    sorted_logits, sorted_indices = torch.sort(scores, descending=False)
    cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
    sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    return scores.masked_fill(indices_to_remove, filter_value)


def repetition_penalty(input_ids, scores, penalty):
    score = torch.gather(scores, 1, input_ids)
    score = torch.where(score < 0, score * penalty, score / penalty)
    scores.scatter_(1, input_ids, score)
    return scores


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens, penalty=None, eos_token_id=None, pad_token_id=0):
    past = None
    cur = input_ids
    unfinished = torch.ones(input_ids.shape[0], dtype=torch.long, device=input_ids.device)
    for _ in range(max_new_tokens):
        out = model(cur if past is None else cur[:, -1:], past_key_values=past, use_cache=True)
        past = out["past_key_values"]
        next_token_logits = out["logits"][:, -1, :]
        if penalty is not None:
            next_token_logits = repetition_penalty(cur, next_token_logits, penalty)
        next_tokens = torch.argmax(next_token_logits, dim=-1)
        if eos_token_id is not None:
            next_tokens = next_tokens * unfinished + pad_token_id * (1 - unfinished)
        cur = torch.cat([cur, next_tokens[:, None]], dim=-1)
        if eos_token_id is not None:
            unfinished = unfinished.mul((next_tokens != eos_token_id).long())
            if unfinished.max() == 0:
                break
    return cur


@torch.no_grad()
def greedy_no_cache(model, input_ids, max_new_tokens):
    cur = input_ids
    for _ in range(max_new_tokens):
        logits = model(cur)["logits"][:, -1, :]
        cur = torch.cat([cur, logits.argmax(-1, keepdim=True)], dim=-1)
    return cur


@torch.no_grad()
def sample_generate(model, input_ids, max_new_tokens, top_k, top_p, uniforms):
    """Sampling with numpy uniforms (inverse CDF) so both frameworks draw the same tokens."""
    cur = input_ids
    past = None
    for i in range(max_new_tokens):
        out = model(cur if past is None else cur[:, -1:], past_key_values=past, use_cache=True)
        past = out["past_key_values"]
        logits = out["logits"][:, -1, :] / 0.8
        logits = top_k_top_p_filtering(logits, top_k=top_k, top_p=top_p)
        probs = F.softmax(logits, dim=-1)
        cdf = probs.cumsum(-1)
        u = torch.from_numpy(uniforms[i]).to(cdf.dtype)[:, None]
        nxt = (cdf < u).sum(-1).clamp(max=probs.size(-1) - 1)
        cur = torch.cat([cur, nxt.unsqueeze(-1)], dim=-1)
    return cur


@torch.no_grad()
def beam_search(model, input_ids, num_beams, max_new_tokens, length_penalty=1.0):
    batch_size, cur_len = input_ids.shape
    vocab_size = model.config.vocab_size
    input_ids = input_ids.unsqueeze(1).expand(batch_size, num_beams, cur_len).contiguous().view(batch_size * num_beams, cur_len)
    beam_scores = torch.zeros((batch_size, num_beams), dtype=torch.float, device=input_ids.device)
    beam_scores[:, 1:] = -1e9
    beam_scores = beam_scores.view((batch_size * num_beams,))
    past = None
    for step in range(max_new_tokens):
        out = model(input_ids if past is None else input_ids[:, -1:], past_key_values=past, use_cache=True)
        next_token_logits = out["logits"][:, -1, :]
        next_token_scores = nn.functional.log_softmax(next_token_logits, dim=-1)
        next_token_scores = next_token_scores + beam_scores[:, None].expand_as(next_token_scores)
        next_token_scores = next_token_scores.view(batch_size, num_beams * vocab_size)
        next_token_scores, next_tokens = torch.topk(next_token_scores, 2 * num_beams, dim=1, largest=True, sorted=True)
        next_indices = torch.div(next_tokens, vocab_size, rounding_mode="floor")
        next_indices_legacy = next_tokens // vocab_size
        assert torch.equal(next_indices, next_indices_legacy)
        next_tokens = next_tokens % vocab_size
        # keep the best num_beams (no EOS handling for simplicity)
        beam_next = next_tokens[:, :num_beams]
        beam_idx = (next_indices[:, :num_beams] + torch.arange(batch_size).unsqueeze(1) * num_beams).view(-1)
        beam_scores = next_token_scores[:, :num_beams].reshape(-1)
        input_ids = torch.cat([input_ids[beam_idx, :], beam_next.reshape(-1).unsqueeze(-1)], dim=-1)
        past = model._reorder_cache(out["past_key_values"], beam_idx)
    scores = beam_scores.view(batch_size, num_beams) / (input_ids.shape[-1] ** length_penalty)
    best = scores.argmax(dim=1)
    best_ids = input_ids.view(batch_size, num_beams, -1)[torch.arange(batch_size), best]
    return best_ids, scores


config = GPT2Config()
model = GPT2LMHeadModel(config)
print("num params:", sum(p.numel() for p in model.parameters()), "unique:", sum(dict((p.data_ptr(), p.numel()) for p in model.parameters()).values()))
print("state_dict keys:", len(model.state_dict()), sorted(k for k in model.state_dict() if "bias" in k and "attn.bias" in k)[:1])


def _load_state_dict_into_model(model_to_load, state_dict, start_prefix=""):
    """transformers.modeling_utils._load_state_dict_into_model (4.2x)."""
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = state_dict.copy()
    if metadata is not None:
        state_dict._metadata = metadata
    error_msgs = []

    def load(module, state_dict, prefix=""):
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        args = (state_dict, prefix, local_metadata, True, [], [], error_msgs)
        if len([key for key in state_dict if key.startswith(prefix)]) > 0:
            module._load_from_state_dict(*args)
        for name, child in module._modules.items():
            if child is not None:
                load(child, state_dict, prefix + name + ".")

    load(model_to_load, state_dict, prefix=start_prefix)
    return error_msgs


# "pretrained" weights drawn from NumPy (the same distributions as _init_weights), loaded as from_pretrained does
init_rs = np.random.RandomState(0)
own = model.state_dict()
pretrained = type(own)()
for k, v in own.items():
    if v.dtype != torch.float32 or k.endswith("attn.masked_bias"):
        pretrained[k] = v.clone()
    elif "ln_" in k:
        pretrained[k] = torch.from_numpy((1.0 if k.endswith("weight") else 0.0) + 0.1 * init_rs.randn(*v.shape).astype(np.float32))
    else:
        pretrained[k] = torch.from_numpy((0.02 * init_rs.randn(*v.shape)).astype(np.float32))
pretrained._metadata = own._metadata
print("load errors:", _load_state_dict_into_model(model, pretrained))
print("tied after load:", model.lm_head.weight is model.transformer.wte.weight)
print("causal bias dtype:", model.transformer.h[0].attn.bias.dtype, tuple(model.transformer.h[0].attn.bias.shape))

rs = np.random.RandomState(1)
B, T = 4, 16
data = torch.from_numpy(rs.randint(3, config.vocab_size, size=(B, T)).astype(np.int64))

# training with attention mask on a padded batch
mask = torch.ones(B, T, dtype=torch.long)
mask[0, 12:] = 0
labels = data.clone()
labels[0, 12:] = -100
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
model.train()
for step in range(6):
    out = model(data, attention_mask=mask, labels=labels)
    out["loss"].backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad()
    print("step %d loss %.8f" % (step, out["loss"].item()))

model.eval()
prompt = data[:, :4]
with torch.no_grad():
    full = model(data)["logits"]
    o1 = model(data[:, :10], use_cache=True)
    o2 = model(data[:, 10:], past_key_values=o1["past_key_values"], use_cache=True)
    print("cache consistency max diff < 1e-5:", bool((o2["logits"] - full[:, 10:]).abs().max() < 1e-5))
    print("logits[0,-1,:5]:", " ".join("%.7f" % v for v in full[0, -1, :5].tolist()))

g = greedy_generate(model, prompt, 12)
print("greedy:", g.tolist())
g2 = greedy_no_cache(model, prompt, 12)
print("greedy no-cache same:", torch.equal(g, g2))
gp = greedy_generate(model, prompt, 12, penalty=1.3, eos_token_id=config.eos_token_id)
print("greedy penalty:", gp.tolist())
unif = np.random.RandomState(7).rand(10, B)
s1 = sample_generate(model, prompt, 10, top_k=10, top_p=0.9, uniforms=unif)
print("topk/topp sample:", s1.tolist())

# top-p warpers agree with each other on a fixed logits tensor
lg = torch.from_numpy(np.random.RandomState(3).randn(3, config.vocab_size).astype(np.float32))
a = top_k_top_p_filtering(lg.clone(), top_p=0.7)
b = top_p_warper_v2(lg.clone(), top_p=0.7)
print("kept per row:", torch.isfinite(a).sum(-1).tolist(), torch.isfinite(b).sum(-1).tolist())
print("topk filt:", torch.isinf(top_k_top_p_filtering(lg.clone(), top_k=5)).sum().item())
best, scores = beam_search(model, prompt, num_beams=3, max_new_tokens=8)
print("beam:", best.tolist())
print("beam scores:", " ".join("%.6f" % v for v in scores.flatten().tolist()))
