/** A response body as loosely typed JSON, for assertions. */

export const readJson = async (response: Response): Promise<any> => response.json();
