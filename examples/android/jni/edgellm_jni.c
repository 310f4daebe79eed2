/*
 * JNI glue for ai.edgellm.EdgeLlm (../java/ai/edgellm/EdgeLlm.java): each
 * native method calls the C API (edgellm/edgellm.h) and turns a failed
 * status into an EdgeLlmException carrying edgellm_last_error's message.
 * Handles travel to Java as jlong. Text crosses as UTF-8 byte arrays
 * (JNI's own strings are "modified UTF-8", which cannot carry emoji).
 *
 * Compiled here against Debian's JDK headers (the tests do it); in an
 * Android Studio project it goes into the CMake module the NDK builds
 * (see ../README.md).
 */
#include <jni.h>
#include <stdlib.h>
#include <string.h>

#include <edgellm/edgellm.h>

static void throw_error(JNIEnv* env, const void* handle) {
  jclass cls = (*env)->FindClass(env, "ai/edgellm/EdgeLlm$EdgeLlmException");
  if (cls) (*env)->ThrowNew(env, cls, edgellm_last_error(handle));
}

/* A NUL-terminated copy of a Java byte[] (NULL for a null array). */
static char* c_string(JNIEnv* env, jbyteArray bytes) {
  jsize n;
  char* s;
  if (!bytes) return NULL;
  n = (*env)->GetArrayLength(env, bytes);
  s = (char*)malloc((size_t)n + 1);
  if (!s) return NULL;
  (*env)->GetByteArrayRegion(env, bytes, 0, n, (jbyte*)s);
  s[n] = '\0';
  return s;
}

static jbyteArray java_bytes(JNIEnv* env, const char* s, int32_t n) {
  jbyteArray out = (*env)->NewByteArray(env, n);
  if (out) (*env)->SetByteArrayRegion(env, out, 0, n, (const jbyte*)s);
  return out;
}

JNIEXPORT jlong JNICALL Java_ai_edgellm_EdgeLlm_nativeLoad(JNIEnv* env, jclass cls, jbyteArray path, jint threads) {
  edgellm_model_options o;
  edgellm_model* m = NULL;
  char* p = c_string(env, path);
  (void)cls;
  edgellm_model_options_init(&o);
  o.n_threads = threads;
  if (edgellm_model_load(p, &o, &m) != EDGELLM_OK) throw_error(env, NULL);
  free(p);
  return (jlong)(intptr_t)m;
}

JNIEXPORT jlong JNICALL Java_ai_edgellm_EdgeLlm_nativeCreateContext(JNIEnv* env, jclass cls, jlong model,
                                                                    jint n_ctx) {
  edgellm_context_options o;
  edgellm_context* c = NULL;
  (void)cls;
  edgellm_context_options_init(&o);
  o.n_ctx = n_ctx;
  if (edgellm_context_create((edgellm_model*)(intptr_t)model, &o, &c) != EDGELLM_OK)
    throw_error(env, (const void*)(intptr_t)model);
  return (jlong)(intptr_t)c;
}

JNIEXPORT void JNICALL Java_ai_edgellm_EdgeLlm_nativeFreeModel(JNIEnv* env, jclass cls, jlong model) {
  (void)cls;
  if (edgellm_model_free((edgellm_model*)(intptr_t)model) != EDGELLM_OK) throw_error(env, NULL);
}

JNIEXPORT void JNICALL Java_ai_edgellm_EdgeLlm_nativeFreeContext(JNIEnv* env, jclass cls, jlong context) {
  (void)cls;
  if (edgellm_context_free((edgellm_context*)(intptr_t)context) != EDGELLM_OK) throw_error(env, NULL);
}

JNIEXPORT jintArray JNICALL Java_ai_edgellm_EdgeLlm_nativeTokenize(JNIEnv* env, jclass cls, jlong model,
                                                                   jbyteArray text, jboolean add_bos) {
  edgellm_model* m = (edgellm_model*)(intptr_t)model;
  jsize len = (*env)->GetArrayLength(env, text);
  char* t = c_string(env, text);
  int32_t n = 0;
  int32_t* ids = NULL;
  jintArray out = NULL;
  edgellm_status st;
  (void)cls;
  /* Ask for the count, then tokenize into a buffer that holds it. */
  st = edgellm_tokenize(m, t, (int32_t)len, add_bos ? 1 : 0, 1, NULL, 0, &n);
  if (st == EDGELLM_OK || st == EDGELLM_ERR_BUFFER_TOO_SMALL) {
    ids = (int32_t*)malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    st = ids ? edgellm_tokenize(m, t, (int32_t)len, add_bos ? 1 : 0, 1, ids, n, &n) : EDGELLM_ERR_OUT_OF_MEMORY;
  }
  if (st == EDGELLM_OK) {
    out = (*env)->NewIntArray(env, n);
    if (out) (*env)->SetIntArrayRegion(env, out, 0, n, (const jint*)ids);
  } else {
    throw_error(env, m);
  }
  free(ids);
  free(t);
  return out;
}

JNIEXPORT jbyteArray JNICALL Java_ai_edgellm_EdgeLlm_nativeApplyChatTemplate(JNIEnv* env, jclass cls, jlong model,
                                                                             jbyteArray messages,
                                                                             jbyteArray template_name) {
  edgellm_model* m = (edgellm_model*)(intptr_t)model;
  char* msgs = c_string(env, messages);
  char* name = c_string(env, template_name);
  char* text = NULL;
  int32_t n = 0;
  jbyteArray out = NULL;
  edgellm_status st = edgellm_apply_chat_template(m, name, msgs, 1, NULL, 0, &n);
  (void)cls;
  if (st == EDGELLM_ERR_BUFFER_TOO_SMALL) {
    text = (char*)malloc((size_t)n + 1);
    st = text ? edgellm_apply_chat_template(m, name, msgs, 1, text, n + 1, &n) : EDGELLM_ERR_OUT_OF_MEMORY;
  }
  if (st == EDGELLM_OK) out = java_bytes(env, text ? text : "", n);
  else throw_error(env, m);
  free(text);
  free(name);
  free(msgs);
  return out;
}

JNIEXPORT void JNICALL Java_ai_edgellm_EdgeLlm_nativePrefill(JNIEnv* env, jclass cls, jlong context,
                                                             jintArray tokens) {
  edgellm_context* c = (edgellm_context*)(intptr_t)context;
  jsize n = (*env)->GetArrayLength(env, tokens);
  jint* ids = (*env)->GetIntArrayElements(env, tokens, NULL);
  edgellm_status st = edgellm_prefill(c, (const int32_t*)ids, (int32_t)n);
  (void)cls;
  (*env)->ReleaseIntArrayElements(env, tokens, ids, JNI_ABORT);
  if (st != EDGELLM_OK) throw_error(env, c);
}

struct listener {
  JNIEnv* env;
  jclass cls;
  jmethodID deliver;
  jobject target;
};

/* Each token to EdgeLlm.deliver(listener, token, bytes); false (or a Java
 * exception) stops the generation. */
static int32_t on_token(int32_t token, const char* piece, int32_t piece_length, void* user_data) {
  struct listener* l = (struct listener*)user_data;
  JNIEnv* env = l->env;
  jbyteArray bytes = java_bytes(env, piece, piece_length);
  jboolean go_on = JNI_FALSE;
  if (bytes) {
    go_on = (*env)->CallStaticBooleanMethod(env, l->cls, l->deliver, l->target, (jint)token, bytes);
    (*env)->DeleteLocalRef(env, bytes);
  }
  return (*env)->ExceptionCheck(env) || !go_on;
}

JNIEXPORT jint JNICALL Java_ai_edgellm_EdgeLlm_nativeGenerate(JNIEnv* env, jclass cls, jlong context,
                                                              jfloat temperature, jlong seed, jint max_tokens,
                                                              jobject listener) {
  edgellm_context* c = (edgellm_context*)(intptr_t)context;
  edgellm_sampling s;
  edgellm_generate_result r;
  struct listener l;
  edgellm_sampling_init(&s);
  edgellm_generate_result_init(&r);
  s.temperature = temperature;
  s.seed = (uint64_t)seed;
  s.n_predict = max_tokens;
  l.env = env;
  l.cls = cls;
  l.target = listener;
  l.deliver = (*env)->GetStaticMethodID(env, cls, "deliver", "(Lai/edgellm/EdgeLlm$TokenListener;I[B)Z");
  if (!l.deliver) return -1; /* NoSuchMethodError is pending */
  if (edgellm_generate(c, &s, listener ? on_token : NULL, &l, &r) != EDGELLM_OK) {
    throw_error(env, c);
    return -1;
  }
  return r.stop_reason;
}

JNIEXPORT void JNICALL Java_ai_edgellm_EdgeLlm_nativeCancel(JNIEnv* env, jclass cls, jlong context) {
  (void)cls;
  if (edgellm_cancel((edgellm_context*)(intptr_t)context) != EDGELLM_OK) throw_error(env, NULL);
}

JNIEXPORT void JNICALL Java_ai_edgellm_EdgeLlm_nativeReset(JNIEnv* env, jclass cls, jlong context) {
  edgellm_context* c = (edgellm_context*)(intptr_t)context;
  (void)cls;
  if (edgellm_reset(c) != EDGELLM_OK) throw_error(env, c);
}

JNIEXPORT void JNICALL Java_ai_edgellm_EdgeLlm_nativeSession(JNIEnv* env, jclass cls, jlong context, jbyteArray path,
                                                             jboolean save) {
  edgellm_context* c = (edgellm_context*)(intptr_t)context;
  char* p = c_string(env, path);
  edgellm_status st = save ? edgellm_session_save(c, p) : edgellm_session_load(c, p);
  (void)cls;
  free(p);
  if (st != EDGELLM_OK) throw_error(env, c);
}

JNIEXPORT void JNICALL Java_ai_edgellm_EdgeLlm_nativeMemoryPressure(JNIEnv* env, jclass cls, jlong context,
                                                                    jint level) {
  edgellm_context* c = (edgellm_context*)(intptr_t)context;
  (void)cls;
  if (edgellm_memory_pressure(c, level) != EDGELLM_OK) throw_error(env, c);
}

JNIEXPORT void JNICALL Java_ai_edgellm_EdgeLlm_nativeThermalState(JNIEnv* env, jclass cls, jlong context,
                                                                  jint state) {
  edgellm_context* c = (edgellm_context*)(intptr_t)context;
  (void)cls;
  if (edgellm_set_thermal_state(c, state) != EDGELLM_OK) throw_error(env, c);
}
