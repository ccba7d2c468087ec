"""chpit: builds, runs and publishes CH-PiT, the Swiss Point-in-Time Law benchmark."""
