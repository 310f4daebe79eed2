"""Tests of the ctypes binding on stories260K (standard library only):
    EDGELLM_LIBRARY=.../libedgellm.so EDGELLM_MODEL=.../stories260K.gguf [EDGELLM_CLI=.../edgellm] \
        python3 examples/python/test_edgellm.py
"""
import os
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edgellm  # noqa: E402

MODEL = os.environ.get("EDGELLM_MODEL", "")
GOLDEN_START = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park."


class Stories260K(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = edgellm.Model(MODEL, n_threads=1)

    @classmethod
    def tearDownClass(cls):
        cls.model.close()

    def test_streams_the_golden_story(self):
        with self.model.context(n_ctx=512) as ctx:
            ctx.prefill(self.model.tokenize(""))
            pieces = list(ctx.generate(temperature=0, n_predict=256))
        self.assertEqual(len(pieces), 256)
        text = "".join(p for _, p in pieces)
        self.assertTrue(text.startswith(GOLDEN_START), text)
        self.assertEqual(ctx.result.n_generated, 256)
        self.assertEqual(edgellm.STOP_REASONS[ctx.result.stop_reason], "n_predict")
        cli = os.environ.get("EDGELLM_CLI")
        if cli:  # exactly `edgellm run`'s text
            out = subprocess.run([cli, "run", "-m", MODEL, "-p", "", "-n", "256", "--temp", "0", "-t", "1"],
                                 capture_output=True, check=True).stdout.decode()
            self.assertEqual(text + "\n", out)

    def test_breaking_out_cancels(self):
        with self.model.context() as ctx:
            ctx.prefill(self.model.tokenize("Once"))
            got = 0
            for _ in ctx.generate(temperature=0):
                got += 1
                if got == 5:
                    break
            self.assertEqual(edgellm.STOP_REASONS[ctx.result.stop_reason], "callback")
            self.assertEqual(ctx.result.n_generated, 5)
            # The conversation goes on from there: 5 more equal tokens 6-10 of one run of 10.
            more = [t for t, _ in ctx.generate(temperature=0, n_predict=5)]
        with self.model.context() as ctx:
            ctx.prefill(self.model.tokenize("Once"))
            ten = [t for t, _ in ctx.generate(temperature=0, n_predict=10)]
        self.assertEqual(more, ten[5:])

    def test_cancel_from_another_thread(self):
        with self.model.context() as ctx:
            ctx.prefill(self.model.tokenize(""))
            got = 0
            for _ in ctx.generate(temperature=0):
                got += 1
                if got == 3:
                    threading.Thread(target=ctx.cancel).start()
                    time.sleep(0.05)  # the generation is waiting for this loop: the cancel lands first
            self.assertEqual(edgellm.STOP_REASONS[ctx.result.stop_reason], "cancelled")
            self.assertLessEqual(ctx.result.n_generated, 4)

    def test_text_and_metadata(self):
        ids = self.model.tokenize("Lily saw a ball.")
        self.assertEqual(ids[0], 1)
        self.assertEqual(self.model.detokenize(ids), "Lily saw a ball.")
        self.assertEqual(self.model.metadata("general.architecture"), "llama")
        self.assertEqual(self.model.info()["n_vocab"], 512)
        self.assertGreater(self.model.plan(n_ctx=256)["kv_bytes"], 0)
        chat = self.model.apply_chat_template('[{"role":"user","content":"Hi"}]', template="chatml")
        self.assertEqual(chat, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
        self.assertIn("edgellm", edgellm.version())

    def test_errors_carry_the_message(self):
        with self.assertRaises(edgellm.EdgeLlmError) as e:
            edgellm.Model("/nonexistent.gguf")
        self.assertIn("/nonexistent.gguf", str(e.exception))
        with self.assertRaises(edgellm.EdgeLlmError) as e:
            self.model.context(n_ctx=-1)
        self.assertIn("n_ctx", str(e.exception))
        with self.model.context() as ctx, self.assertRaises(edgellm.EdgeLlmError) as e:
            list(ctx.generate())
        self.assertIn("prefill a prompt first", str(e.exception))


if __name__ == "__main__":
    if not MODEL:
        sys.exit("set EDGELLM_MODEL to stories260K.gguf")
    unittest.main()
