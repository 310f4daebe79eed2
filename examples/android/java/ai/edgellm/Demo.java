// Runs EdgeLlm on a desktop JVM (what the tests do; an app calls the same
// methods): greedy from BOS alone, 256 tokens, streamed to stdout.
//   java -Djava.library.path=DIR_WITH_libedgellm_jni.so -cp classes ai.edgellm.Demo stories260K.gguf
package ai.edgellm;

public final class Demo {
  public static void main(String[] args) {
    try (EdgeLlm llm = new EdgeLlm(args[0], 1, 512)) {
      llm.prefill(llm.tokenize("", true));
      StringBuilder text = new StringBuilder();
      llm.generate(0.0f, 0, 256, (token, piece) -> {
        text.append(piece);
        return true;
      });
      System.out.println(text);
    }
  }
}
