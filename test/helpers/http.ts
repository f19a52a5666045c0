/** A response body as loosely typed JSON, for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const readJson = async (response: Response): Promise<any> => response.json();
