// edgellm for Android apps (Kotlin or Java): one model and one conversation
// over the C API (include/edgellm/edgellm.h) through jni/edgellm_jni.c.
//
//   EdgeLlm llm = new EdgeLlm(path, 0, 2048);            // 0 threads: one per performance core
//   llm.prefill(llm.tokenize(llm.applyChatTemplate(messagesJson, null), true));
//   llm.generate(0.8f, 42, 256, (token, piece) -> { show(piece); return true; });   // on a worker thread
//   llm.cancel();                                         // from the UI thread
//   llm.close();
//
// Kotlin: val llm = EdgeLlm(path, 0, 2048); llm.generate(0.8f, 42L, 256) { _, piece -> show(piece); true }
//
// Text crosses the boundary as UTF-8 bytes, not through JNI's "modified
// UTF-8" (which cannot carry emoji). Every failure is an EdgeLlmException
// carrying the library's message.
package ai.edgellm;

import java.nio.charset.StandardCharsets;

public final class EdgeLlm implements AutoCloseable {
  static {
    System.loadLibrary("edgellm_jni");
  }

  /** Called with each generated token; return false to stop after it. */
  public interface TokenListener {
    boolean onToken(int token, String piece);
  }

  public static final class EdgeLlmException extends RuntimeException {
    public EdgeLlmException(String message) {
      super(message);
    }
  }

  // Stop reasons generate() returns (EDGELLM_STOP_*).
  public static final int STOP_EOG = 0, STOP_N_PREDICT = 1, STOP_CALLBACK = 2, STOP_CANCELLED = 3,
      STOP_CONTEXT_FULL = 4;
  // Thermal states (EDGELLM_THERMAL_*): map PowerManager.THERMAL_STATUS_* onto these.
  public static final int THERMAL_NOMINAL = 0, THERMAL_FAIR = 1, THERMAL_SERIOUS = 2, THERMAL_CRITICAL = 3;

  private long model, context;  // the C handles

  public EdgeLlm(String modelPath, int threads, int contextTokens) {
    model = nativeLoad(utf8(modelPath), threads);
    try {
      context = nativeCreateContext(model, contextTokens);
    } catch (EdgeLlmException e) {
      nativeFreeModel(model);
      model = 0;
      throw e;
    }
  }

  public int[] tokenize(String text, boolean addBos) {
    return nativeTokenize(model, utf8(text), addBos);
  }

  /** messagesJson: [{"role":"user","content":"..."}]; templateName null: the model's own template. */
  public String applyChatTemplate(String messagesJson, String templateName) {
    byte[] text = nativeApplyChatTemplate(model, utf8(messagesJson), templateName == null ? null : utf8(templateName));
    return new String(text, StandardCharsets.UTF_8);
  }

  public void prefill(int[] tokens) {
    nativePrefill(context, tokens);
  }

  /** Blocks until done (run it off the UI thread); returns a STOP_* reason. */
  public int generate(float temperature, long seed, int maxTokens, TokenListener listener) {
    return nativeGenerate(context, temperature, seed, maxTokens, listener);
  }

  /** Any thread: the running generate() stops within one token. */
  public void cancel() {
    nativeCancel(context);
  }

  public void reset() {
    nativeReset(context);
  }

  public void saveSession(String path) {
    nativeSession(context, utf8(path), true);
  }

  public void loadSession(String path) {
    nativeSession(context, utf8(path), false);
  }

  /** ComponentCallbacks2.onTrimMemory: RUNNING_LOW frees buffers, RUNNING_CRITICAL and up spill the KV cache. */
  public void onTrimMemory(int androidLevel) {
    // TRIM_MEMORY_RUNNING_LOW = 10, TRIM_MEMORY_RUNNING_CRITICAL = 15, TRIM_MEMORY_COMPLETE = 80.
    int level = androidLevel >= 15 ? 2 : androidLevel >= 10 ? 1 : 0;
    nativeMemoryPressure(context, level);
  }

  /** PowerManager.OnThermalStatusChangedListener: NONE/LIGHT 0-1, MODERATE/SEVERE 2-3, CRITICAL+ 4-6. */
  public void onThermalStatusChanged(int androidStatus) {
    int state = androidStatus <= 1 ? androidStatus : androidStatus <= 3 ? THERMAL_SERIOUS : THERMAL_CRITICAL;
    nativeThermalState(context, state);
  }

  @Override
  public void close() {
    if (context != 0) nativeFreeContext(context);
    if (model != 0) nativeFreeModel(model);
    context = model = 0;
  }

  // Called from native code with each token's bytes.
  private static boolean deliver(TokenListener listener, int token, byte[] piece) {
    return listener.onToken(token, new String(piece, StandardCharsets.UTF_8));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static native long nativeLoad(byte[] path, int threads);
  private static native long nativeCreateContext(long model, int contextTokens);
  private static native void nativeFreeModel(long model);
  private static native void nativeFreeContext(long context);
  private static native int[] nativeTokenize(long model, byte[] text, boolean addBos);
  private static native byte[] nativeApplyChatTemplate(long model, byte[] messagesJson, byte[] templateName);
  private static native void nativePrefill(long context, int[] tokens);
  private static native int nativeGenerate(long context, float temperature, long seed, int maxTokens,
                                           TokenListener listener);
  private static native void nativeCancel(long context);
  private static native void nativeReset(long context);
  private static native void nativeSession(long context, byte[] path, boolean save);
  private static native void nativeMemoryPressure(long context, int level);
  private static native void nativeThermalState(long context, int state);
}
