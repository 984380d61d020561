def shortest_path(grid: list[list[int]], start: tuple[int, int], goal: tuple[int, int]) -> int:
    """Return the fewest 4-neighbour steps from start to goal through free cells, or -1."""
    rows = len(grid)
    cols = len(grid[0]) if rows else 0
    for r, c in (start, goal):
        if not (0 <= r < rows and 0 <= c < cols):
            raise ValueError(f"position {(r, c)} is out of bounds")
        if grid[r][c] != 0:
            raise ValueError(f"position {(r, c)} is blocked")
    sr, sc = start
    gr, gc = goal
    if (sr, sc) == (gr, gc):
        return 0
    dist = [[-1] * cols for _ in range(rows)]
    dist[sr][sc] = 0
    queue = [(sr, sc)]
    head = 0
    while head < len(queue):
        r, c = queue[head]
        head += 1
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == 0 and dist[nr][nc] == -1:
                dist[nr][nc] = dist[r][c] + 1
                if (nr, nc) == (gr, gc):
                    return dist[nr][nc]
                queue.append((nr, nc))
    return -1
