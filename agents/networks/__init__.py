"""Policy-value networks. ``NetConfig`` picks the architecture; ``build_network(config)`` builds it."""

from agents.networks.resnet import NetConfig, PolicyValueResNet, build_network

__all__ = ["NetConfig", "PolicyValueResNet", "build_network"]
