"""An eager PyTorch BERT with HuggingFace's computation structure, the peer
mtbert's benchmarks are compared with.

What a user would otherwise write in Python: the module structure and the
order of operations of HuggingFace's modeling_bert (BertEmbeddings,
BertSelfAttention, BertSelfOutput, BertIntermediate, BertOutput, BertPooler),
the three task heads of mtbert's base experiment (SST-5 classes, Quora binary
and STS-B regression, both pairs encoded jointly: "cross"), their losses, and
torch.optim.AdamW with HuggingFace's no-decay parameter groups. Written for
this benchmark from the documented semantics; nothing is imported from
transformers (not installed here), so it runs on Debian's python3-torch alone.
"""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    initializer_range: float = 0.02


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size, padding_idx=c.pad_token_id)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)
        # HF keeps the position ids as a buffer and slices it per call.
        self.register_buffer("position_ids", torch.arange(c.max_position_embeddings).unsqueeze(0), persistent=False)

    def forward(self, input_ids, token_type_ids):
        n = input_ids.shape[1]
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(self.position_ids[:, :n])
        return self.dropout(self.LayerNorm(x))


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c.num_attention_heads
        self.head_dim = c.hidden_size // c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)
        self.dropout = nn.Dropout(c.attention_probs_dropout_prob)

    def split_heads(self, x):  # [B, N, H] -> [B, heads, N, head_dim]
        return x.view(x.shape[0], x.shape[1], self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, hidden, extended_mask):
        q = self.split_heads(self.query(hidden))
        k = self.split_heads(self.key(hidden))
        v = self.split_heads(self.value(hidden))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + extended_mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return context.view(context.shape[0], context.shape[1], self.heads * self.head_dim)


class BertSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, hidden, residual):
        return self.LayerNorm(self.dropout(self.dense(hidden)) + residual)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, hidden, extended_mask):
        return self.output(self.self(hidden, extended_mask), hidden)


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)

    def forward(self, hidden):
        return F.gelu(self.dense(hidden))


class BertOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.intermediate_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.dropout = nn.Dropout(c.hidden_dropout_prob)

    def forward(self, hidden, residual):
        return self.LayerNorm(self.dropout(self.dense(hidden)) + residual)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, hidden, extended_mask):
        attended = self.attention(hidden, extended_mask)
        return self.output(self.intermediate(attended), attended)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c.num_hidden_layers)])

    def forward(self, hidden, extended_mask):
        for layer in self.layer:
            hidden = layer(hidden, extended_mask)
        return hidden


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)

    def forward(self, hidden):
        return torch.tanh(self.dense(hidden[:, 0]))


class BertModel(nn.Module):
    def __init__(self, c, with_pooler=True):
        super().__init__()
        self.config = c
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c) if with_pooler else None
        self.apply(self._init_weights)

    def _init_weights(self, module):
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(0.0, std)
            module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(0.0, std)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.weight.data.fill_(1.0)
            module.bias.data.zero_()

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.embeddings(input_ids, token_type_ids)
        # HF's get_extended_attention_mask: (1 - mask) * lowest, broadcast over heads and queries.
        extended = (1.0 - attention_mask[:, None, None, :].to(hidden.dtype)) * torch.finfo(hidden.dtype).min
        last = self.encoder(hidden, extended)
        return last, self.pooler(last) if self.pooler is not None else None


# The heads of mtbert's base experiment (experiments/base.yaml): CLS pooling,
# dropout 0.3, one linear layer; both pair tasks encode "[CLS] a [SEP] b [SEP]".
TASKS = (("sst", 5), ("para", 1), ("sts", 1))


class MultitaskPeer(nn.Module):
    def __init__(self, c, head_dropout=0.3):
        super().__init__()
        self.bert = BertModel(c)
        self.heads = nn.ModuleDict()
        for task, outputs in TASKS:
            head = nn.Module()
            head.dropout = nn.Dropout(head_dropout)
            head.classifier = nn.Linear(c.hidden_size, outputs)
            self.heads[task] = head

    def forward(self, task, input_ids, attention_mask, token_type_ids):
        last, _ = self.bert(input_ids, attention_mask, token_type_ids)
        head = self.heads[task]
        out = head.classifier(head.dropout(last[:, 0]))
        return out if task == "sst" else out.squeeze(-1)

    def loss(self, task, outputs, labels):
        outputs = outputs.float()  # losses in float32 under autocast, as mtbert's heads compute them
        if task == "sst":
            return F.cross_entropy(outputs, labels.long())
        if task == "para":
            return F.binary_cross_entropy_with_logits(outputs, labels)
        return F.mse_loss(outputs, labels)


class BertForMaskedLMPeer(nn.Module):
    """HuggingFace's BertForMaskedLM: the encoder without pooler, the head's
    transform (dense, GELU, LayerNorm) and a decoder tied to the word
    embeddings, logits at every position, cross-entropy with ignore index
    -100 at the unmasked ones."""

    def __init__(self, c):
        super().__init__()
        self.bert = BertModel(c, with_pooler=False)
        self.transform_dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.transform_norm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))

    def forward(self, input_ids, attention_mask, token_type_ids):
        last, _ = self.bert(input_ids, attention_mask, token_type_ids)
        x = self.transform_norm(F.gelu(self.transform_dense(last)))
        return F.linear(x, self.bert.embeddings.word_embeddings.weight, self.bias)

    @staticmethod
    def loss(logits, labels):
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)


def make_adamw(model, lr, weight_decay, **implementation):
    """torch.optim.AdamW with HuggingFace's groups (no decay on biases and
    LayerNorm weights), split into encoder and heads as mtbert's optimizer does.
    implementation: AdamW's fused= or foreach= (none: its default, as the CPU
    peer runs it)."""
    groups = [[], [], [], []]
    for name, p in model.named_parameters():
        no_decay = name.endswith("bias") or "LayerNorm" in name
        groups[(0 if name.startswith("bert.") else 2) + (1 if no_decay else 0)].append(p)
    return torch.optim.AdamW(
        [{"params": g, "weight_decay": 0.0 if i % 2 else weight_decay} for i, g in enumerate(groups)],
        lr=lr, betas=(0.9, 0.999), eps=1e-8, **implementation)
