"""The hybrids section's arithmetic: the roles read from the sweep's specs, and the published hybrids'
byte shares (each consistent with its own counts: half at the length where the two are equal, growing
with the context until a window stops the cache)."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from studies.hybrids import section  # noqa: E402


class Roles(unittest.TestCase):
    def test_roles(self):
        self.assertEqual(section.role("hybrid:share=1,state=gated_deltanet,window_beta=best"), "cache")
        self.assertEqual(section.role("hybrid:share=0,state=gated_deltanet,window_beta=16,alpha=best"), "state")
        self.assertEqual(section.role("hybrid:share=best,state=gated_deltanet,window_beta=best,alpha=best"), "sum")
        self.assertEqual(section.role("hybrid:share=best,state=gated_deltanet,window_beta=best,slot=best"), "slot")
        self.assertIsNone(section.role("softmax:beta=best"))


class Published(unittest.TestCase):
    def test_shares_follow_the_counts(self):
        for r in section.published_rows((1024, 4096, 32768)):
            with self.subTest(model=r["name"]):
                shares = [s for _, _, s in r["shares"]]
                self.assertTrue(all(0 < s < 1 for s in shares))
                if r["window"]:
                    held = [min(t, r["window"]) for t, _, _ in r["shares"]]
                    self.assertEqual(shares[held.index(max(held)):], [shares[-1]] * (len(held) - held.index(max(held))))
                else:
                    self.assertEqual(shares, sorted(shares))
                    self.assertLess(shares[0], shares[-1])
                if r["equal"] is not None:
                    at = section.published_rows((r["equal"],))
                    half = [x for x in at if x["name"] == r["name"]][0]["shares"][0][2]
                    self.assertAlmostEqual(half, 0.5)

    def test_the_table_states_each_config(self):
        lines = section.published_table()
        for m in section.PUBLISHED:
            self.assertTrue(any(m["name"] in l and m["config"] in l for l in lines), m["name"])


if __name__ == "__main__":
    unittest.main()
