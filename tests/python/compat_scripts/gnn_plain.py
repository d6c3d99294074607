"""Graph neural networks in plain PyTorch (no PyTorch Geometric) on a synthetic homophilous graph (an ordinary
PyTorch 1.13 program).

The graph is an `edge_index` LongTensor [2, E] made undirected and coalesced with `torch.unique(return_inverse=
True)`; degrees come from `torch.bincount` and from `zeros(...).scatter_add_`. GCN multiplies by the normalised
adjacency D^-1/2 (A + I) D^-1/2 built as `torch.sparse_coo_tensor` (`torch.sparse.mm`, `torch.sparse.sum`);
GraphSAGE takes neighbourhood means with `index_select` + `index_add_` (checked against `scatter_reduce(reduce=
'mean', include_self=False)`); GAT's attention is a segment softmax (`scatter_reduce(reduce='amax')`, exp,
`scatter_add_`), checked against `torch.sparse.softmax`. Node classification uses boolean train / val / test
masks and `F.dropout(training=self.training)`; link prediction uses negative samples. `torch.argsort` orders
nodes by degree.

Weights come from a NumPy RandomState and dropout is off in the runs whose losses are compared (a short run with
dropout only checks that it trains); negative edges come from NumPy (`torch.randint` with a Generator is checked
for range and reproducibility). --device picks the device.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_graph(n=200, e=1200, f=16, c=4, seed=0):
    rs = np.random.RandomState(seed)
    y = rs.randint(0, c, size=n)
    x = rs.standard_normal((c, f))[y] * 1.5 + rs.standard_normal((n, f))
    src = rs.randint(0, n, size=e)
    dst = np.array([rs.choice(np.nonzero(y == y[s])[0]) if rs.rand() < 0.7 else rs.randint(n) for s in src])
    edge_index = np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])])
    perm = rs.permutation(n)
    masks = [np.zeros(n, dtype=bool) for _ in range(3)]
    masks[0][perm[:80]], masks[1][perm[80:130]], masks[2][perm[130:]] = True, True, True
    return (torch.from_numpy(x.astype(np.float32)), torch.from_numpy(edge_index.astype(np.int64)),
            torch.from_numpy(y.astype(np.int64)), *[torch.from_numpy(m) for m in masks])


def coalesce(edge_index, num_nodes):
    key = edge_index[0] * num_nodes + edge_index[1]
    uniq, inverse = torch.unique(key, sorted=True, return_inverse=True)
    return torch.stack([uniq // num_nodes, uniq % num_nodes]), inverse


def degree(index, num_nodes):
    out = torch.zeros((num_nodes,), device=index.device)
    return out.scatter_add_(0, index, torch.ones((index.size(0),), device=index.device))


def gcn_adjacency(edge_index, num_nodes):
    loop = torch.arange(num_nodes, device=edge_index.device).unsqueeze(0).repeat(2, 1)
    row, col = torch.cat([edge_index, loop], dim=1)
    deg = torch.bincount(col, minlength=num_nodes).float()
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)
    adj = torch.sparse_coo_tensor(torch.stack([col, row]), deg_inv_sqrt[row] * deg_inv_sqrt[col],
                                  (num_nodes, num_nodes))
    return adj.coalesce()


class GCNConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout, bias=False)
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x, adj):
        return torch.sparse.mm(adj, self.lin(x)) + self.bias


class SAGEConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin_l = nn.Linear(cin, cout)
        self.lin_r = nn.Linear(cin, cout, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        msg = x.index_select(0, src)
        summed = torch.zeros(x.size(0), x.size(1), device=x.device).index_add_(0, dst, msg)
        mean = summed / degree(dst, x.size(0)).clamp(min=1).unsqueeze(-1)
        return self.lin_l(mean) + self.lin_r(x)


def segment_softmax(src, index, num_nodes):
    idx = index.unsqueeze(-1).expand_as(src)
    smax = torch.full((num_nodes, src.size(1)), float('-inf'), device=src.device)
    smax = smax.scatter_reduce(0, idx, src, reduce='amax', include_self=False)
    out = (src - smax.index_select(0, index)).exp()
    total = torch.zeros((num_nodes, src.size(1)), device=src.device).scatter_add_(0, idx, out)
    return out / (total.index_select(0, index) + 1e-16)


class GATConv(nn.Module):
    def __init__(self, cin, cout, heads=2, concat=True):
        super().__init__()
        self.heads, self.cout, self.concat = heads, cout, concat
        self.lin = nn.Linear(cin, heads * cout, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, cout))
        self.att_dst = nn.Parameter(torch.empty(1, heads, cout))
        self.bias = nn.Parameter(torch.zeros(heads * cout if concat else cout))
        nn.init.xavier_uniform_(self.att_src)
        nn.init.xavier_uniform_(self.att_dst)

    def attention(self, x, edge_index):
        h = self.lin(x).view(-1, self.heads, self.cout)
        src, dst = edge_index[0], edge_index[1]
        alpha = (h * self.att_src).sum(-1).index_select(0, src) + (h * self.att_dst).sum(dim=-1).index_select(0, dst)
        return h, F.leaky_relu(alpha, 0.2)

    def forward(self, x, edge_index):
        h, alpha = self.attention(x, edge_index)
        src, dst = edge_index[0], edge_index[1]
        alpha = F.dropout(segment_softmax(alpha, dst, x.size(0)), p=0.0, training=self.training)
        out = torch.zeros(x.size(0), self.heads, self.cout, device=x.device)
        out = out.index_add_(0, dst, h[src] * alpha.unsqueeze(-1))
        out = out.reshape(x.size(0), -1) if self.concat else out.mean(dim=1)
        return out + self.bias


class Net(nn.Module):
    def __init__(self, kind, cin, hid, cout, p=0.0):
        super().__init__()
        self.kind, self.p = kind, p
        if kind == 'gcn':
            self.conv1, self.conv2 = GCNConv(cin, hid), GCNConv(hid, cout)
        elif kind == 'sage':
            self.conv1, self.conv2 = SAGEConv(cin, hid), SAGEConv(hid, cout)
        else:
            self.conv1, self.conv2 = GATConv(cin, hid // 2, heads=2), GATConv(hid, cout, heads=1, concat=False)

    def forward(self, x, graph):
        x = F.dropout(x, p=self.p, training=self.training)
        x = F.elu(self.conv1(x, graph)) if self.kind == 'gat' else F.relu(self.conv1(x, graph))
        x = F.dropout(x, p=self.p, training=self.training)
        return self.conv2(x, graph)


def numpy_weights(model, seed):
    rs = np.random.RandomState(seed)
    model.load_state_dict({k: torch.from_numpy((rs.standard_normal(tuple(v.shape)) * 0.3).astype(np.float32))
                           for k, v in model.state_dict().items()})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=15)
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    x, edge_index, y, train_mask, val_mask, test_mask = [t.to(device) for t in make_graph()]
    n = x.size(0)
    edges, inverse = coalesce(edge_index, n)
    print("edges:", edge_index.size(1), "unique:", edges.size(1), "inverse in range:",
          int(inverse.max()) == edges.size(1) - 1)
    deg = torch.bincount(edges[1], minlength=n)
    print("degrees agree:", torch.equal(deg.float(), degree(edges[1], n)))
    print("highest degrees:", deg[torch.argsort(deg, descending=True)[:5]].tolist())
    adj = gcn_adjacency(edges, n)
    print("adjacency:", adj.is_sparse, tuple(adj.shape), adj._nnz(), adj.layout == torch.sparse_coo)
    row_sums = torch.sparse.sum(adj, dim=1)
    print("sparse row sums agree:", torch.allclose(row_sums.to_dense(), adj.to_dense().sum(1), atol=1e-6))

    # SAGE's mean and GAT's segment softmax, against scatter_reduce and torch.sparse.softmax
    sage = SAGEConv(16, 8).to(device)
    msg = x.index_select(0, edges[0])
    mean = torch.zeros_like(x).scatter_reduce(0, edges[1].unsqueeze(-1).expand_as(msg), msg, reduce='mean',
                                              include_self=False)
    manual = torch.zeros_like(x).index_add_(0, edges[1], msg) / degree(edges[1], n).clamp(min=1).unsqueeze(-1)
    print("neighbour means agree:", torch.allclose(mean, manual, atol=1e-5), tuple(sage(x, edges).shape))
    gat = GATConv(16, 4, heads=1).to(device)
    numpy_weights(gat, 3)
    with torch.no_grad():
        _, alpha = gat.attention(x, edges)
        seg = segment_softmax(alpha, edges[1], n)[:, 0]
        sp = torch.sparse.softmax(torch.sparse_coo_tensor(torch.stack([edges[1], edges[0]]), alpha[:, 0], (n, n)), 1)
        dense = sp.to_dense()
        print("segment softmax = sparse softmax:", torch.allclose(seg, dense[edges[1], edges[0]], atol=1e-6))

    for kind in ('gcn', 'sage', 'gat'):
        model = Net(kind, 16, 16, 4).to(device)
        numpy_weights(model, 1)
        opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        graph = adj if kind == 'gcn' else edges
        for epoch in range(args.epochs):
            model.train()
            opt.zero_grad()
            loss = F.cross_entropy(model(x, graph)[train_mask], y[train_mask])
            loss.backward()
            opt.step()
            if epoch % 5 == 0 or epoch == args.epochs - 1:
                print(f"{kind} epoch {epoch} loss {loss.item():.6f}")
        model.eval()
        with torch.no_grad():
            pred = model(x, graph).argmax(dim=1)
            accs = [int((pred[m] == y[m]).sum()) / int(m.sum()) for m in (train_mask, val_mask, test_mask)]
        print(f"{kind} accuracy: train {accs[0]:.4f} val {accs[1]:.4f} test {accs[2]:.4f}")

    model = Net('gat', 16, 16, 4, p=0.5).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(3):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x, edges)[train_mask], y[train_mask])
        loss.backward()
        opt.step()
    print("with dropout, finite:", bool(torch.isfinite(loss)))

    encoder = Net('sage', 16, 16, 8).to(device)
    numpy_weights(encoder, 2)
    opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
    rs = np.random.RandomState(7)
    for step in range(8):
        opt.zero_grad()
        z = encoder(x, edges)
        pos = edges[:, torch.from_numpy(rs.randint(0, edges.size(1), size=256)).to(device)]
        neg = torch.from_numpy(rs.randint(0, n, size=(2, 256))).to(device)
        logits = torch.cat([(z[pos[0]] * z[pos[1]]).sum(dim=-1), (z[neg[0]] * z[neg[1]]).sum(dim=-1)])
        targets = torch.cat([torch.ones(256, device=device), torch.zeros(256, device=device)])
        loss = F.binary_cross_entropy_with_logits(logits, targets)
        loss.backward()
        opt.step()
        print(f"link prediction step {step} loss {loss.item():.6f}")
    neg = torch.randint(0, n, (2, 5), generator=torch.Generator().manual_seed(0))
    again = torch.randint(n, (2, 5), generator=torch.Generator().manual_seed(0))
    print("negative samples in range:", bool((neg >= 0).all() and (neg < n).all()), "reproducible:",
          torch.equal(neg, again))
    print(f"parameters on: {next(encoder.parameters()).device}")


if __name__ == "__main__":
    main()
