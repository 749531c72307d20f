"""What every simulated part shares: resource kinds, object helpers, the API
client over lightkube, watched caches and the keyed control loop."""
