"""ResNet-18 and ResNet-50 (He et al., "Deep Residual Learning for Image Recognition", 2015: the
ImageNet networks of its Table 1, v1 blocks, batch normalization after every convolution), built
layer for layer the same in mxplug's Symbol API and in PyTorch, for tools/bench/gpu_bench.py.

Each system trains one batch of synthetic images repeatedly (SGD with momentum, softmax cross
entropy) and runs inference on it; the data stays on the device, so the numbers are the network's.
"""
import time

STAGES = {18: ("basic", [2, 2, 2, 2]), 50: ("bottleneck", [3, 4, 6, 3])}
WIDTHS = [64, 128, 256, 512]


def mxplug_resnet(mx, depth, classes=1000):
    kind, blocks = STAGES[depth]
    sym = mx.sym

    def conv_bn(x, name, filters, kernel, stride, relu):
        pad = (kernel // 2, kernel // 2)
        x = sym.Convolution(x, num_filter=filters, kernel=(kernel, kernel), stride=(stride, stride), pad=pad,
                            no_bias=True, name=name + "_conv")
        x = sym.BatchNorm(x, fix_gamma=False, eps=1e-5, momentum=0.9, name=name + "_bn")
        return sym.Activation(x, act_type="relu") if relu else x

    x = conv_bn(sym.Variable("data"), "stem", 64, 7, 2, True)
    x = sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    channels = 64
    for stage, (width, count) in enumerate(zip(WIDTHS, blocks)):
        for b in range(count):
            name = "s%d_b%d" % (stage + 1, b + 1)
            stride = 2 if b == 0 and stage > 0 else 1
            out = width * (4 if kind == "bottleneck" else 1)
            if kind == "basic":
                y = conv_bn(x, name + "_a", width, 3, stride, True)
                y = conv_bn(y, name + "_b", width, 3, 1, False)
            else:
                y = conv_bn(x, name + "_a", width, 1, 1, True)
                y = conv_bn(y, name + "_b", width, 3, stride, True)
                y = conv_bn(y, name + "_c", out, 1, 1, False)
            short = conv_bn(x, name + "_proj", out, 1, stride, False) if stride != 1 or channels != out else x
            x = sym.Activation(y + short, act_type="relu")
            channels = out
    x = sym.Pooling(x, global_pool=True, pool_type="avg", kernel=(1, 1))
    x = sym.FullyConnected(sym.Flatten(x), num_hidden=classes, name="fc")
    return sym.SoftmaxOutput(x, name="softmax")


def torch_resnet(torch, depth, classes=1000):
    nn = torch.nn
    kind, blocks = STAGES[depth]

    def conv_bn(cin, cout, kernel, stride, relu):
        layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout, eps=1e-5,
                                                                                               momentum=0.1)]
        return nn.Sequential(*(layers + [nn.ReLU()] if relu else layers))

    class Block(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            out = width * (4 if kind == "bottleneck" else 1)
            if kind == "basic":
                self.body = nn.Sequential(conv_bn(cin, width, 3, stride, True), conv_bn(width, width, 3, 1, False))
            else:
                self.body = nn.Sequential(conv_bn(cin, width, 1, 1, True), conv_bn(width, width, 3, stride, True),
                                          conv_bn(width, out, 1, 1, False))
            self.short = conv_bn(cin, out, 1, stride, False) if stride != 1 or cin != out else nn.Identity()
            self.out = out

        def forward(self, x):
            return torch.relu(self.body(x) + self.short(x))

    layers, channels = [conv_bn(3, 64, 7, 2, True), nn.MaxPool2d(3, 2, 1)], 64
    for stage, (width, count) in enumerate(zip(WIDTHS, blocks)):
        for b in range(count):
            block = Block(channels, width, 2 if b == 0 and stage > 0 else 1)
            layers.append(block)
            channels = block.out
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, classes)]
    return nn.Sequential(*layers)


def measure(train, infer, batch, steps, drain):
    """{first step s, train images/s, inference images/s}: the first training step alone (the
    autotuning and planning it triggers), then `steps` steps of each after warm-ups."""
    t = time.perf_counter()
    train()
    drain()
    out = {"first step": time.perf_counter() - t}
    for name, run in (("train", train), ("inference", infer)):
        for _ in range(2):
            run()
        drain()
        t = time.perf_counter()
        for _ in range(steps):
            run()
        drain()
        out[name] = steps * batch / (time.perf_counter() - t)
    return out


def memory_profile(train, batches, used, steps):
    """Device memory in use (used(), MiB) after each of `steps` training steps whose batch size
    alternates over `batches`: {at step 10, the most from step 10 on}."""
    train(batches[0])
    seen = []
    for i in range(steps):
        train(batches[i % len(batches)])
        if i + 1 >= 10:
            seen.append(used())
    return {"memory at step 10": seen[0], "memory peak from step 10": max(seen)}


def mxplug_steps(mx, ctx, depth, batch, size):
    """(train(n), infer()) for mxplug's Module on ctx: a training step (forward_backward and update)
    on a synthetic batch of n (Module re-binds when n changes, as MXNet's does), and inference on
    the batch of `batch`."""
    import numpy as np
    rng = np.random.default_rng(0)
    batches = {}

    def batch_of(n):
        if n not in batches:
            data = mx.nd.array(rng.standard_normal((n, 3, size, size), dtype=np.float32), ctx=ctx)
            label = mx.nd.array(rng.integers(0, 1000, n).astype(np.float32), ctx=ctx)
            batches[n] = mx.io.DataBatch(data=[data], label=[label])
        return batches[n]

    mod = mx.mod.Module(mxplug_resnet(mx, depth), context=ctx)
    first = batch_of(batch)
    mod.bind(data_shapes=[("data", first.data[0].shape)], label_shapes=[("softmax_label", first.label[0].shape)])
    mod.init_params(mx.init.Xavier(magnitude=2.0))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.01, "momentum": 0.9, "wd": 1e-4})

    def train(n=batch):
        mod.forward_backward(batch_of(n))
        mod.update()

    return train, lambda: mod.forward(first, is_train=False)


def torch_steps(torch, dev, depth, batch, size):
    """The same for a PyTorch eager loop on dev (batches of n are the first n images)."""
    torch.manual_seed(0)
    net = torch_resnet(torch, depth).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    data = torch.randn(batch, 3, size, size, device=dev)
    label = torch.randint(0, 1000, (batch,), device=dev)
    loss_fn = torch.nn.CrossEntropyLoss()

    def train(n=batch):
        net.train()
        opt.zero_grad(set_to_none=True)
        loss_fn(net(data[:n]), label[:n]).backward()
        opt.step()

    def infer():
        net.eval()
        with torch.no_grad():
            net(data)

    return train, infer
