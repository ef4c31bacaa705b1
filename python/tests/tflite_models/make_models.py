"""Builds the .tflite models the TFLite Micro tests plan and run.

Run once with TensorFlow installed (`pip install tensorflow`); the models
are committed, so the tests need only tflite-micro. Weights come from fixed
seeds, so a run makes the same networks (the converter's bytes may differ
between TensorFlow releases). Every op is a TFLite built-in that TFLite
Micro has a kernel for. (Keras' LSTM converts to a WHILE over its steps,
which TFLite Micro runs but whose outputs differ from TFLite's even
without a plan, reading memory it never wrote: it is left out.)

    python make_models.py OUT_DIR
"""

import sys
from pathlib import Path

import numpy as np
import tensorflow as tf


def convert(fn_or_model, representative=None, concrete=None):
    if concrete is not None:
        conv = tf.lite.TFLiteConverter.from_concrete_functions([concrete], fn_or_model)
    else:
        conv = tf.lite.TFLiteConverter.from_keras_model(fn_or_model)
    if representative is not None:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def calibration(draw):
    """The converter's representative dataset for int8 ranges: 32 inputs
    from `draw`."""

    def representative():
        for _ in range(32):
            yield [draw().astype(np.float32)]

    return representative


def residual_cnn():
    """A float CNN: three residual blocks (ADD), two branch joins
    (CONCATENATION), pooling and a dense head."""
    tf.keras.utils.set_random_seed(1)
    L = tf.keras.layers
    x_in = L.Input((32, 32, 3), batch_size=1)
    x = L.Conv2D(16, 3, padding="same", activation="relu")(x_in)
    for width in (16, 24, 32):
        y = L.Conv2D(width, 3, padding="same", activation="relu")(x)
        y = L.Conv2D(width, 3, padding="same")(y)
        skip = x if x.shape[-1] == width else L.Conv2D(width, 1)(x)
        x = L.ReLU()(L.Add()([y, skip]))
        a = L.Conv2D(width // 2, 1, activation="relu")(x)
        b = L.Conv2D(width // 2, 3, padding="same", activation="relu")(x)
        x = L.Concatenate()([x, a, b])
        x = L.MaxPooling2D(2)(x)
    x = L.GlobalAveragePooling2D()(x)
    out = L.Dense(10, activation="softmax")(x)
    return convert(tf.keras.Model(x_in, out))


def keyword_spotting_int8():
    """A DS-CNN keyword spotter (49x10 MFCC input, depthwise-separable
    blocks), fully int8-quantized."""
    tf.keras.utils.set_random_seed(2)
    L = tf.keras.layers
    x_in = L.Input((49, 10, 1), batch_size=1)
    x = L.Conv2D(64, (10, 4), strides=(2, 2), padding="same", activation="relu")(x_in)
    for _ in range(4):
        x = L.DepthwiseConv2D(3, padding="same", activation="relu")(x)
        x = L.Conv2D(64, 1, activation="relu")(x)
    x = L.AveragePooling2D((25, 5))(x)
    x = L.Flatten()(x)
    out = L.Dense(12, activation="softmax")(x)
    rng = np.random.default_rng(2)
    return convert(tf.keras.Model(x_in, out), calibration(lambda: rng.normal(size=(1, 49, 10, 1))))


def while_loop():
    """A model with three subgraphs: a WHILE whose body runs a small
    dense layer a data-independent number of times."""
    tf.keras.utils.set_random_seed(3)
    w = tf.constant(np.random.default_rng(3).normal(size=(16, 16)).astype(np.float32) * 0.2)

    class Loop(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec((1, 16), tf.float32)])
        def __call__(self, x):
            i = tf.constant(0)

            def body(i, x):
                h = tf.tanh(tf.matmul(x, w))
                return i + 1, tf.concat([h[:, :8], x[:, 8:] + h[:, 8:]], axis=1)

            _, y = tf.while_loop(lambda i, x: i < 5, body, (i, x))
            return tf.nn.relu(y) + x

    m = Loop()
    return convert(m, concrete=m.__call__.get_concrete_function())


def unet():
    """A float U-Net: encoder maps kept as skip connections until the
    decoder joins them (CONCATENATION after TRANSPOSE_CONV)."""
    tf.keras.utils.set_random_seed(5)
    L = tf.keras.layers
    x_in = L.Input((48, 48, 3), batch_size=1)
    skips, x = [], x_in
    for width in (8, 16, 24):
        x = L.Conv2D(width, 3, padding="same", activation="relu")(x)
        x = L.Conv2D(width, 3, padding="same", activation="relu")(x)
        skips.append(x)
        x = L.MaxPooling2D(2)(x)
    x = L.Conv2D(32, 3, padding="same", activation="relu")(x)
    for width, skip in zip((24, 16, 8), reversed(skips)):
        x = L.Conv2DTranspose(width, 2, strides=2, activation="relu")(x)
        x = L.Concatenate()([x, skip])
        x = L.Conv2D(width, 3, padding="same", activation="relu")(x)
    out = L.Conv2D(2, 1)(x)
    return convert(tf.keras.Model(x_in, out))


def person_detection_int8():
    """A MobileNetV2-shaped person detector (96x96 grey input, inverted
    residual blocks with expansions and ADDs), fully int8-quantized."""
    tf.keras.utils.set_random_seed(6)
    L = tf.keras.layers
    x_in = L.Input((96, 96, 1), batch_size=1)
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu6")(x_in)
    for width, stride, repeat in ((16, 1, 1), (24, 2, 2), (32, 2, 3), (48, 2, 2)):
        for r in range(repeat):
            s = stride if r == 0 else 1
            y = L.Conv2D(x.shape[-1] * 6, 1, activation="relu6")(x)
            y = L.DepthwiseConv2D(3, strides=s, padding="same", activation="relu6")(y)
            y = L.Conv2D(width, 1)(y)
            x = L.Add()([x, y]) if s == 1 and x.shape[-1] == width else y
    x = L.GlobalAveragePooling2D()(x)
    out = L.Dense(2, activation="softmax")(x)
    rng = np.random.default_rng(6)
    return convert(tf.keras.Model(x_in, out), calibration(lambda: rng.uniform(-1, 1, size=(1, 96, 96, 1))))


MODELS = {
    "residual_cnn.tflite": residual_cnn,
    "kws_int8.tflite": keyword_spotting_int8,
    "while_loop.tflite": while_loop,
    "unet.tflite": unet,
    "person_detection_int8.tflite": person_detection_int8,
}

if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for name, make in MODELS.items():
        data = make()
        (out / name).write_bytes(data)
        print(name, len(data), "bytes")
