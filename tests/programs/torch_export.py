#!/usr/bin/env python3
"""tests/programs/torch_export: torchvision models exported with torch.onnx.export, as
users export them: random weights (nothing is downloaded), a dynamic batch dimension,
so that the graph computes its shapes itself (Shape -> Gather -> Div -> Mul -> Slice for
ShuffleNet's channel split, Mod and Pad for Swin's windows). Small inputs keep the
export quick; Swin and ViT are torchvision's classes with small configurations.

    .venv/torch/bin/python tests/programs/torch_export.py OUTDIR OPSET [MODEL...]

writes OUTDIR/<model>_opset<OPSET>.onnx for each model (all of MODELS when none named)
and prints one line per file.
"""
import io
import os
import sys
import warnings

import torch
import torchvision
from torchvision.models.swin_transformer import SwinTransformer
from torchvision.models.vision_transformer import VisionTransformer

warnings.filterwarnings("ignore")


def tiny_swin():
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[1, 2],
                           window_size=[7, 7], num_classes=10)


def tiny_vit():
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                             hidden_dim=32, mlp_dim=64, num_classes=10)


M = torchvision.models
# name -> (constructor, input side)
MODELS = {
    "shufflenet_v2_x0_5": (lambda: M.shufflenet_v2_x0_5(weights=None), 64),
    "resnet18": (lambda: M.resnet18(weights=None), 64),
    "mobilenet_v2": (lambda: M.mobilenet_v2(weights=None), 64),
    "mobilenet_v3_small": (lambda: M.mobilenet_v3_small(weights=None), 64),
    "squeezenet1_1": (lambda: M.squeezenet1_1(weights=None), 64),
    "googlenet": (lambda: M.googlenet(weights=None, init_weights=True), 64),
    "swin_tiny": (tiny_swin, 60),  # 15x15 patches: padded to whole 7x7 windows in the graph
    "vit_tiny": (tiny_vit, 32),
}


def main():
    outdir, opset = sys.argv[1], int(sys.argv[2])
    names = sys.argv[3:] or list(MODELS)
    torch.manual_seed(0)
    for name in names:
        ctor, side = MODELS[name]
        model = ctor().eval()
        buf = io.BytesIO()
        # Grad stays on: without it torch 1.13 runs ViT's attention through its fused fast
        # path (aten::_native_multi_head_attention), which has no ONNX export.
        torch.onnx.export(model, torch.randn(1, 3, side, side), buf, opset_version=opset,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        path = os.path.join(outdir, f"{name}_opset{opset}.onnx")
        with open(path, "wb") as f:
            f.write(buf.getvalue())
        print(path, flush=True)


if __name__ == "__main__":
    main()
