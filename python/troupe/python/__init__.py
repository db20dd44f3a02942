"""troupe.python: the modules TensorFlow 1.x programs import from tensorflow.python directly
(`from tensorflow.python.client import timeline` becomes
`from troupe.python.client import timeline`)."""
