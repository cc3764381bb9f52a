"""What a process is made from: its settings (`settings`, from the environment, checked when
made), the Redis clients they call for (`redis_clients`) and the card data it plays with
(`card_data`).
"""
