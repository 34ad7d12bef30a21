import sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
import humanoid_walker2d_variants_pilot as w2v, torch
steps = int(sys.argv[1])
torch.set_num_threads(1)
pool = [f"w2v_{100 + i}" for i in range(16)]
pol = w2v.t.train(pool, steps, 0)
for b in ("w2v_2", "w2v_4", "w2v_1", "w2v_3", "walker2d_v5"):
    print(w2v.t.row(f"pool of 16 variants, {steps} steps", b, pol, 16), flush=True)
