"""Kotlin: definitions and symbols as the Kotlin IDE lists them; a companion object's members
are the class's, an extension function its receiver type's, and a file's annotations, package
and imports boilerplate."""

from __future__ import annotations

from kenning.languages import language_for_path
from tests.chunking_helpers import chunk_at, chunked, spans, src, symbols_of

# In the shape of Expo's and Stripe's Android modules (expo-modules-core, stripe-react-native).
MODULE = src(
    """
    @file:Suppress("FunctionName")

    package expo.modules.camera

    import android.content.Context
    import expo.modules.kotlin.Promise

    /** How the flash fires when a photo is taken. */
    enum class FlashMode(val value: String) {
      OFF("off"),
      ON("on");

      fun next(): FlashMode = if (this == OFF) ON else OFF
    }

    interface PictureSaver {
      fun save(bytes: ByteArray, promise: Promise)
      val directory: String
    }

    /** Takes pictures and hands them to a saver. */
    class CameraSession(private val context: Context, val saver: PictureSaver) {
      var zoom: Float = 0f
        private set

      val isRunning: Boolean
        get() {
          return zoom > 0f
        }

      constructor(context: Context) : this(context, DiskSaver(context))

      // Crops the picture to the preview's aspect ratio before saving it.
      fun takePicture(options: Map<String, Any>, promise: Promise) {
        val bytes = capture(options)
        saver.save(bytes, promise)
      }

      companion object {
        const val MAX_ZOOM = 8f

        fun create(context: Context) = CameraSession(context)
      }
    }

    object CameraRegistry {
      fun register(session: CameraSession) {}
    }

    typealias PictureCallback = (ByteArray) -> Unit

    fun Context.hasCameraPermission(): Boolean = checkSelfPermission("android.permission.CAMERA") == 0
    """
)


def test_kotlin_definitions_are_symbols_of_their_classes() -> None:
    assert language_for_path("android/src/main/java/expo/modules/camera/CameraSession.kt") == "kotlin"
    assert language_for_path("build.gradle.kts") == "kotlin"
    result = chunked(MODULE, "kotlin")
    assert symbols_of(result) == {
        ("FlashMode", "enum", None),
        ("value", "property", "FlashMode"),
        ("OFF", "enum_member", "FlashMode"),
        ("ON", "enum_member", "FlashMode"),
        ("next", "method", "FlashMode"),
        ("PictureSaver", "interface", None),
        ("save", "method", "PictureSaver"),
        ("directory", "property", "PictureSaver"),
        ("CameraSession", "class", None),
        # `val`/`var` constructor parameters are properties; a plain parameter is not.
        ("context", "property", "CameraSession"),
        ("saver", "property", "CameraSession"),
        ("zoom", "property", "CameraSession"),
        ("isRunning", "property", "CameraSession"),
        ("constructor", "constructor", "CameraSession"),
        ("takePicture", "method", "CameraSession"),
        # A companion object's members are called on the class, and listed there.
        ("MAX_ZOOM", "constant", "CameraSession"),
        ("create", "method", "CameraSession"),
        ("CameraRegistry", "class", None),
        ("register", "method", "CameraRegistry"),
        ("PictureCallback", "type", None),
        # An extension function is called on its receiver: `context.hasCameraPermission()`.
        ("hasCameraPermission", "method", "Context"),
    }
    # The file annotation, the package and the imports: boilerplate.
    assert spans(result)[0] == (1, 6, "imports", None)


def test_kotlin_members_are_chunks_with_their_comments_and_class() -> None:
    small = chunked(MODULE, "kotlin", max_chars=300)
    take = chunk_at(small, 35)
    assert (take.kind, take.symbol) == ("method", "CameraSession.takePicture")
    assert take.text.lstrip().startswith("// Crops the picture")
    assert "class CameraSession(" in take.header
    running = chunk_at(small, 27)
    assert (running.kind, running.symbol) == ("property", "CameraSession.isRunning")
    # The companion object stays in the class's part; its members are the class's.
    assert (chunk_at(small, 42).kind, chunk_at(small, 42).symbol) == ("class", "CameraSession")
    assert not any(s.name == "bytes" for s in small.symbols)  # a local is no symbol


def test_an_annotated_definitions_signature_runs_to_its_body() -> None:
    # The grammar names no body field: the signature is read up to the body's node, annotations
    # joined to it, as Java's are, not the first line (`@DoNotStrip`) alone.
    text = src(
        """
        @DoNotStrip
        public object Arguments {
          @JvmStatic
          public fun makeNativeArray(objects: List<*>?): WritableNativeArray {
            val nativeArray = WritableNativeArray()
            for (elem in objects.orEmpty()) {
              nativeArray.pushString(elem.toString())
            }
            return nativeArray
          }

          fun size(array: ReadableArray): Int = array.size()
          fun isEmpty(array: ReadableArray): Boolean = array.size() == 0
        }
        """
    )
    small = chunked(text, "kotlin", max_chars=200)
    make = chunk_at(small, 5)
    assert (make.kind, make.symbol) == ("method", "Arguments.makeNativeArray")
    assert make.header.split("\n")[1:] == ["@DoNotStrip public object Arguments"]
    rest = chunk_at(small, 8)
    assert rest.header.split("\n")[2] == (
        "  @JvmStatic public fun makeNativeArray(objects: List<*>?): WritableNativeArray"
    )
    # One-liners with an expression body are defined, not only declared.
    assert chunk_at(small, 13).header.split("\n")[0] == "arguments: size, is empty"
