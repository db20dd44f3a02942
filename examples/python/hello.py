# The seed's hello example (TensorFlow's "Start a TensorFlow server as a single-process
# cluster"), verbatim but for the import.
import troupe as tf

c = tf.constant("Hello, distributed TensorFlow!")
server = tf.train.Server.create_local_server()
sess = tf.Session(server.target)  # Create a session on the server.
print(sess.run(c))
