"""Models the benchmarks share, built without downloads."""

_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}


def resnet(torch, depth=50, num_classes=1000):
    """ResNet-50/101/152 (He et al.), torchvision's own where it is installed, else the same layout
    (bottleneck blocks, stride on the 3x3 convolution, a projection where the shape changes)."""
    if depth not in _BLOCKS:
        raise ValueError(f"ResNet depth {depth}: one of {sorted(_BLOCKS)}")
    try:
        import torchvision
        return getattr(torchvision.models, f"resnet{depth}")(num_classes=num_classes)
    except ImportError:
        pass
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, planes, stride):
            super().__init__()
            out = planes * 4
            self.conv1, self.bn1 = nn.Conv2d(cin, planes, 1, bias=False), nn.BatchNorm2d(planes)
            self.conv2, self.bn2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False), nn.BatchNorm2d(planes)
            self.conv3, self.bn3 = nn.Conv2d(planes, out, 1, bias=False), nn.BatchNorm2d(out)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None if stride == 1 and cin == out else nn.Sequential(
                nn.Conv2d(cin, out, 1, stride, bias=False), nn.BatchNorm2d(out))

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            return self.relu(y + (x if self.downsample is None else self.downsample(x)))

    layers, cin = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                   nn.MaxPool2d(3, 2, 1)], 64
    for planes, n, stride in zip((64, 128, 256, 512), _BLOCKS[depth], (1, 2, 2, 2)):
        blocks = []
        for k in range(n):
            blocks.append(Bottleneck(cin, planes, stride if k == 0 else 1))
            cin = planes * 4
        layers.append(nn.Sequential(*blocks))
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes)]
    return nn.Sequential(*layers)
