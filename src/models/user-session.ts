import { Column, DataType, ForeignKey, Model, Table } from 'sequelize-typescript';
import { User } from './user';

// A signed-in browser: the cookie holds a random token, the row its SHA-256.
@Table({ tableName: 'user_sessions', underscored: true, timestamps: true, updatedAt: false })
export class UserSession extends Model {
  @Column({ type: DataType.UUID, primaryKey: true, defaultValue: DataType.UUIDV4 })
  declare id: string;

  @ForeignKey(() => User)
  @Column({ type: DataType.UUID, allowNull: false })
  declare userId: string;

  @Column({ type: DataType.CHAR(64), allowNull: false, unique: true })
  declare tokenHash: string;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare idleExpiresAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare expiresAt: Date;

  @Column({ type: DataType.DATE(3), allowNull: false })
  declare createdAt: Date;
}
