"""Semantically aligned joint slots and the embodiment graph (XHugWBC sec. 3.2, after H-Zero).

Every body's actuated joints are embedded into a fixed list of slots; absent slots are zero
padded and a binary controllability indicator ``I`` marks the present ones. The embodiment
graph is a kinematic tree over the slots that are present *or locked* (a locked joint stays a
vertex); its adjacency ``A`` is symmetric and the structural mask is ``M = I + A``.

The paper's global joint-index table is not available: the slot orders below are ours [recon].
"""

from __future__ import annotations

import numpy as np

# Planar family [recon]: J_max = 13.
PLANAR_SLOTS: tuple[str, ...] = (
    "waist", "l_hip", "l_knee", "l_ankle", "l_toe", "r_hip", "r_knee", "r_ankle", "r_toe",
    "l_shoulder", "l_elbow", "r_shoulder", "r_elbow",
)
# Parent slot in the template's kinematic tree ("" = attached to the root); the waist stands
# for the pelvis/torso, so hips and shoulders hang from it and the tree is connected.
PLANAR_PARENT: dict[str, str] = {
    "waist": "", "l_hip": "waist", "r_hip": "waist", "l_knee": "l_hip", "r_knee": "r_hip",
    "l_ankle": "l_knee", "r_ankle": "r_knee", "l_toe": "l_ankle", "r_toe": "r_ankle",
    "l_shoulder": "waist", "r_shoulder": "waist", "l_elbow": "l_shoulder",
    "r_elbow": "r_shoulder",
}
PLANAR_ANCHORS = ("waist",)  # always vertices (the trunk), present or locked

# 3-D family [paper: 12 leg + 3 waist + 14 arm + 3 head = 32 slots; order recon].
LEG_JOINTS = ("hip_roll", "hip_yaw", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
ARM_JOINTS = ("shoulder_roll", "shoulder_yaw", "shoulder_pitch", "elbow", "wrist_roll",
              "wrist_yaw", "wrist_pitch")
HUMANOID_SLOTS: tuple[str, ...] = (
    *(f"l_{j}" for j in LEG_JOINTS), *(f"r_{j}" for j in LEG_JOINTS),
    "waist_roll", "waist_yaw", "waist_pitch",
    *(f"l_{j}" for j in ARM_JOINTS), *(f"r_{j}" for j in ARM_JOINTS),
    "head_roll", "head_yaw", "head_pitch",
)
HUMANOID_ANCHORS = ("waist_yaw", "waist_roll", "waist_pitch")
# Kinematic order inside the trunk: yaw -> roll -> pitch (G1); hips get a sampled order.
WAIST_ORDER = ("waist_yaw", "waist_roll", "waist_pitch")
HIP_TEMPLATE_ORDER = ("hip_pitch", "hip_roll", "hip_yaw")
SHOULDER_ORDER = ("shoulder_pitch", "shoulder_roll", "shoulder_yaw")
WRIST_ORDER = ("wrist_roll", "wrist_pitch", "wrist_yaw")
HEAD_ORDER = ("head_yaw", "head_pitch", "head_roll")
AXIS_OF = {"roll": (1.0, 0.0, 0.0), "pitch": (0.0, 1.0, 0.0), "yaw": (0.0, 0.0, 1.0)}


def axis_of(slot: str) -> tuple[float, float, float]:
    """Template motion axis of a 3-D slot: roll = x, pitch = y (knee, elbow), yaw = z."""
    for key, axis in AXIS_OF.items():
        if slot.endswith(key):
            return axis
    return AXIS_OF["pitch"]  # knee, elbow


def humanoid_parent(hip_order: tuple[str, str, str]) -> dict[str, str]:
    """Parent slot of every 3-D slot, given the sampled kinematic order of the hip joints.

    Ankle pitch and roll form a parallel linkage on real robots: both are collapsed onto the
    knee (the paper's rule), wrists and head chain in their template order.
    """
    parent: dict[str, str] = {}
    for prev, cur in zip(("",) + WAIST_ORDER[:-1], WAIST_ORDER):
        parent[cur] = prev
    for side in ("l", "r"):
        chain = [f"{side}_{j}" for j in hip_order]
        parent[chain[0]] = "waist_yaw"  # the pelvis side of the trunk
        parent[chain[1]] = chain[0]
        parent[chain[2]] = chain[1]
        parent[f"{side}_knee"] = chain[2]
        parent[f"{side}_ankle_pitch"] = f"{side}_knee"
        parent[f"{side}_ankle_roll"] = f"{side}_knee"
        arm = [f"{side}_{j}" for j in (*SHOULDER_ORDER, "elbow", *WRIST_ORDER)]
        parent[arm[0]] = "waist_pitch"  # shoulders hang from the torso
        for prev, cur in zip(arm[:-1], arm[1:]):
            parent[cur] = prev
    parent[HEAD_ORDER[0]] = "waist_pitch"
    parent[HEAD_ORDER[1]] = HEAD_ORDER[0]
    parent[HEAD_ORDER[2]] = HEAD_ORDER[1]
    return parent


def adjacency(slots: tuple[str, ...], parent: dict[str, str], vertices: np.ndarray) -> np.ndarray:
    """A (symmetric, zero diagonal): each vertex linked to its nearest vertex ancestor."""
    index = {s: i for i, s in enumerate(slots)}
    a = np.zeros((len(slots), len(slots)), dtype=np.int8)
    for slot in slots:
        i = index[slot]
        if not vertices[i]:
            continue
        up = parent[slot]
        while up and not vertices[index[up]]:
            up = parent[up]
        if up:
            j = index[up]
            a[i, j] = a[j, i] = 1
    return a


def structural_mask(a: np.ndarray) -> np.ndarray:
    """M = I + A (self-loops), the first encoder layer's attention mask."""
    return (a + np.eye(len(a), dtype=a.dtype)).astype(np.int8)
