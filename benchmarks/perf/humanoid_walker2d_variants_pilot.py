"""Pilot: physics-consistent variants of walker2d_v5 (link length, radius, density per link
type, both legs alike; inertia from the geoms), per-body PPO 1e5 vs a = 0."""
import functools, os, sys, tempfile
import mujoco, numpy as np, torch
sys.path.insert(0, os.path.dirname(__file__))
import humanoid_learning_table as t
from papergym.envs.humanoid import bodies as B
from papergym.envs.humanoid.named import load_gymnasium_body, gymnasium_asset, GYM_WALKER_MAP
from papergym.envs.humanoid.embodiment import rest_on_ground

LINKS = {"torso": "torso", "thigh": "thigh", "leg": "leg", "foot": "foot",
         "thigh_left": "thigh", "leg_left": "leg", "foot_left": "foot"}
PARENT = {"thigh": "torso", "thigh_left": "torso", "leg": "thigh", "leg_left": "thigh_left",
          "foot": "leg", "foot_left": "leg_left"}

def variant_xml(seed, spread=0.2):
    rng = np.random.default_rng(seed)
    kinds = ["torso", "thigh", "leg", "foot"]
    L = {k: rng.uniform(1 - spread, 1 + spread) for k in kinds}
    R = {k: rng.uniform(1 - spread, 1 + spread) for k in kinds}
    D = {k: rng.uniform(1 - spread, 1 + spread) for k in kinds}
    spec = mujoco.MjSpec.from_file(gymnasium_asset("walker2d_v5.xml"))
    for b in spec.bodies:
        if b.name not in LINKS:
            continue
        k = LINKS[b.name]
        hinge = [j for j in b.joints if j.type == mujoco.mjtJoint.mjJNT_HINGE]
        jpos = np.array(hinge[0].pos) if (hinge and b.name in PARENT) else np.zeros(3)
        if b.name in PARENT:
            lp = L[LINKS[PARENT[b.name]]]
            b.pos = (np.array(b.pos) + jpos) * lp - jpos * L[k]
            for j in hinge:
                j.pos = np.array(j.pos) * L[k]
        for g in b.geoms:
            g.pos = np.array(g.pos) * L[k]
            g.size = np.array([g.size[0] * R[k], g.size[1] * L[k], g.size[2]])
            g.density = 1000.0 * D[k]
    path = os.path.join(tempfile.mkdtemp(), f"w2v_{seed}.xml")
    with open(path, "w") as f:
        f.write(spec.to_xml())
    return path, (L, R, D)

_orig = B.named
@functools.lru_cache(maxsize=64)
def named(family, name, rv="v1"):
    if name.startswith("w2v_"):
        path, p = variant_xml(int(name[4:]))
        body = load_gymnasium_body(path, name, family, GYM_WALKER_MAP)
        rest_on_ground(body)
        print(name, "mass", round(float(body.model.body_mass.sum()), 1), "h*", round(body.nominal_height, 3),
              {k: tuple(round(float(x[k]), 2) for x in p) for k in p[0]}, file=sys.stderr, flush=True)
        return body
    return _orig(family, name, rv)
B.named = named

if __name__ == "__main__":
    name, seed = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(1)
    pol = t.train([name], 100_000, seed)
    print(t.row(f"self seed {seed}", name, pol, 16), flush=True)
